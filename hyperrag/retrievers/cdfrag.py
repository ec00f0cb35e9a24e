"""CDF-RAG (causal dynamic feedback): refined query → dual-path retrieval → generation with causal and
hallucination checks → feedback loop.

Per batch of questions (the paper's §2 and Appendix B.3):
  1. refine (§2.2) — up to ``max_refine_steps`` (T) actions per question: at each step the PPO policy (a
     ``models/ppo/...`` checkpoint) picks expand / simplify / decompose — or, after the first, stop — from the
     embedding of the current query (the question, then the last step's rewrites); without a policy the
     ``fixed_action`` is applied once. Actions are carried out by the LLM or their LLM-free stand-ins and chain
     (:mod:`hyperrag.refinement.actions`);
  2. dual-path retrieval (§2.3) — semantic: every passage scored by its best cosine over the query set, the top
     ``semantic_k`` are T_sem; causal (``causal_retrieval``): depth-limited traversal of the directed causal graph
     (:mod:`hyperrag.causal.traversal`) from the causal nodes most similar to the queries, giving the paths
     C_graph. The knowledge set K = T_sem ∪ the passages of C_graph (best path first, at most ``causal_k`` beyond
     T_sem; :func:`knowledge_union`); the ranking keeps T_sem at its dense ranks, then (``union_order``) C_graph's
     passages and the rest by cosine;
  3. generate (§2.4–2.5, with an LLM and ``generation.enabled``) — knowledge rewriting, the answer, the causal graph
     check with fallback generation, hallucination detection with rewriting
     (:class:`~hyperrag.causal.generation.CausalGenerator`);
  4. feedback loop (B.3, ``generation.max_requery``) — a question whose final answer abstains or fails a check
     re-enters refinement (one more action: the policy's best, stop excluded; without a policy the next action
     not yet taken) and retrieval, and is answered again; the round the checks rate best is kept
     (:func:`round_quality`; the earliest at a tie). Every round is in the query's ``details["feedback"]``.

Every configured LLM step that does not run (no LLM, a failed call, an unverified pair) is counted with
:meth:`~hyperrag.retrievers.base.Retriever.skip`.

With ``index_dir`` (``retrieve.py method=cdfrag index_dir=DIR``) the corpus is a knowledge-graph index
directory's passages and the OpenIE triples of the causal candidates are the index's own (reconstructed from its
provenance, so they follow ``python -m hyperrag.index insert/delete``); the causal index is keyed by the index's
manifest key and updated incrementally: only inserted passages are extracted, scored and verified.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.causal.graph import CausalIndex, load_or_build_causal_index
from hyperrag.causal.traversal import CausalPath, CausalTraversal
from hyperrag.config.validation import as_dict
from hyperrag.data.types import Dataset
from hyperrag.errors import InputError
from hyperrag.eval.causal import semantic_refinement_score
from hyperrag.refinement.actions import ACTIONS, QueryRefiner, Refinement
from hyperrag.refinement.ppo import STOP, policy_compatibility
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs
from hyperrag.retrievers.settings import CDFRAGSettings

log = logging.getLogger(__name__)


def round_quality(gen: dict[str, Any]) -> tuple[bool, bool, float, float]:
    """How the checks rate one round's answer (higher is better): passes them all; answers (no abstention);
    S_causal (1 when undefined); 1 − S_hallucination (1 when not measured)."""
    from hyperrag.eval.text import is_abstention

    answered = bool(gen["answer"].strip()) and not is_abstention(gen["answer"])
    s_causal = 1.0 if gen["s_causal"] is None else float(gen["s_causal"])
    grounded = 1.0 - (0.0 if gen["hallucination"] is None else float(gen["hallucination"]))
    return bool(gen["checks_passed"]), answered, s_causal, grounded


def knowledge_union(dense_order: list[int], causal_order: list[int], semantic_k: int, causal_k: int,
                    union_order: str) -> tuple[list[int], list[int], list[int]]:
    """K = T_sem ∪ C_graph's passages and the ranking it gives (§2.3).

    Args:
        dense_order: passage positions by semantic score, best first.
        causal_order: the passages holding C_graph's edges, best path first.
        semantic_k: |T_sem|, the semantic top-k.
        causal_k: C_graph passages (not already in T_sem) joining K, at most.
        union_order: ``semantic_first`` — T_sem, then C_graph's passages, then the rest by semantic score;
            ``dense`` — T_sem, then the rest by semantic score (C_graph's passages at their own place; K only
            shapes the generator's evidence).

    Returns:
        ``(T_sem, the C_graph passages added, the ranking)``. Either order keeps every T_sem passage at its dense
        rank: the union never pushes a semantic top-k passage down.
    """
    semantic = dense_order[:semantic_k]
    in_sem = set(semantic)
    causal = [j for j in causal_order if j not in in_sem][:causal_k]
    head = semantic + causal if union_order == "semantic_first" else semantic
    chosen = set(head)
    return semantic, causal, head + [j for j in dense_order if j not in chosen]


def resolve_trained_checkpoint(spec: str | None, models_dir: str | Path, task: str, data_name: str,
                               compatibility: str | None = None, unseen: list[str] | None = None) -> Path | None:
    """Resolve a checkpoint setting: ``null``/``none`` → None; a path → it; ``auto`` → the newest
    ``<models_dir>/<task>/*/model.ckpt`` whose artifact record says it trained on ``data_name`` with the
    ``compatibility`` key (``None``: any) and on none of the ``unseen`` query ids (the ones about to be scored),
    else None. Artifacts without a record are never picked (see :mod:`hyperrag.utils.artifacts`)."""
    from hyperrag.utils.artifacts import find_artifact

    if spec is None or str(spec).lower() in ("none", "null", "false", ""):
        return None
    if str(spec) != "auto":
        path = Path(spec)
        if not path.is_file():
            raise InputError("checkpoint not found", path=path)
        return path
    found = find_artifact(models_dir, task, data_name, compatibility, unseen or ())
    if found is None:
        log.info("no %s artifact for %s (compatibility %s) that saw none of the %d queries scored here",
                 task, data_name, compatibility, len(unseen or ()))
    return found


class CDFRAGRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.CDFRAGSettings` — the trained parts (``classifier``,
            ``policy``, ``models_dir``), refinement (``fixed_action``, ``max_refine_steps``, ``refine_with_llm``,
            ``expand_keywords``), dual-path retrieval (``causal_retrieval``, ``semantic_k``, ``causal_k``,
            ``union_order``,
            ``causal``, ``traversal``), generation with its checks and the feedback loop (``generation``),
            ``details_paths``, ``index_root``.
        encoder: the sentence embedder (passages, queries, causal nodes, policy states).
        llm: refinement, pair verification, generation and checks; ``NoLLM`` runs the LLM-free form.
        index_dir: retrieve over this knowledge-graph index directory (built and updated with ``python -m
            hyperrag.index``): its passages (the dataset's corpus must be them, in index order), its OpenIE
            triples, and its passage embeddings (it must come from ``encoder``).
    """

    name = "cdfrag"
    supports_index_dir = True
    settings: CDFRAGSettings

    def __init__(self, settings: CDFRAGSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.models_dir = Path(settings.models_dir)
        self.refiner = QueryRefiner(self.llm, use_llm=settings.refine_with_llm,
                                    expand_keywords=settings.expand_keywords,
                                    top_passage=self._top_passage_texts)
        self.causal_index: CausalIndex | None = None
        self.traversal: CausalTraversal | None = None
        self.policy: Any = None
        self.policy_path: Path | None = None
        self.classifier_path: Path | None = None
        self.passage_emb: torch.Tensor | None = None
        self.passage_texts: list[str] = []
        self.passage_ids: list[str] = []
        self._position: dict[str, int] = {}
        self._options: dict[str, tuple[str, ...]] = {}
        self._generator: Any = None
        self._totals = {"queries": 0, "with_paths": 0, "requeried": 0, "fallbacks": 0, "fallbacks_rejected": 0,
                        "causal_checked": 0, "rewrites": 0}
        self._actions_taken: dict[str, int] = {}

    # ---- indexing ------------------------------------------------------------------------------------
    def index(self, dataset: Dataset) -> None:
        from hyperrag.causal.classifier import classifier_compatibility

        self.passage_texts = [p.content for p in dataset.corpus.passages]
        self.passage_ids = dataset.corpus.ids
        self._position = {p: i for i, p in enumerate(self.passage_ids)}
        self._options = {q.question: q.options for q in dataset.queries if q.options}
        triples, triples_key, self.passage_emb = None, None, None
        if self.index_dir:
            triples, triples_key = self._index_dir_triples(dataset)
        if self.passage_emb is None:
            self.passage_emb = self.encoder.encode(self.passage_texts, desc="passages")
        self.passage_emb = self.passage_emb.to(self.device)
        s = self.settings
        if s.causal_retrieval:
            # trained on UniCausal (no question of any retrieval set), matched by marked-text format and encoder
            self.classifier_path = resolve_trained_checkpoint(s.classifier, self.models_dir, "causal_pair",
                                                              "unicausal", classifier_compatibility(s.classifier_encoder))
            self.causal_index = load_or_build_causal_index(dataset, self.encoder, s.causal,
                                                           classifier_path=self.classifier_path, llm=self.llm,
                                                           root=s.index_root, openie_triples=triples,
                                                           openie_key=triples_key)
            self.traversal = CausalTraversal(self.causal_index.graph, s.traversal)
            if s.causal.verify:  # pairs in the graph whose verification did not run (no LLM, failed, capped)
                self.skip("causal_pair_verification",
                          sum("llm" not in e for e in self.causal_index.graph.edge_info))
        scored = [q.id for q in dataset.queries]
        self.policy_path = resolve_trained_checkpoint(s.policy, self.models_dir, "ppo", dataset.name,
                                                      policy_compatibility(s, self.encoder, self.llm), unseen=scored)
        if self.policy_path is not None:
            from hyperrag.refinement.ppo import PPOPolicy

            self.policy = PPOPolicy.load_from_checkpoint(str(self.policy_path), map_location="cpu").eval()
            log.info("refinement policy %s", self.policy_path)

    def _index_dir_triples(self, dataset: Dataset) -> tuple[list[list[tuple[str, str, str]]], str]:
        """The index's per-passage triples and key (its passage embeddings are kept when the encoder matches)."""
        from hyperrag.graph.provenance import passage_triples

        kg = self.open_index_dir(dataset)
        assert kg is not None
        if kg.provenance is None:
            raise InputError("the index has no provenance.pt (built by an older version), so its passages' "
                             "OpenIE triples are unknown; rebuild it with `python -m hyperrag.index build`",
                             path=self.index_dir, field="index_dir")
        if kg.encoder_key and kg.encoder_key == getattr(self.encoder, "model_key", None):
            self.passage_emb = kg.embeddings.passage
        return passage_triples(kg.graph, kg.provenance), f"kg-index:{kg.key}"

    @property
    def causal_graph(self):  # type: ignore[no-untyped-def]
        assert self.causal_index is not None, "call index() first"
        return self.causal_index.graph

    def _top_passage_texts(self, questions: list[str]) -> list[str]:
        """Best dense passage per question (the expand stand-in's feedback document)."""
        assert self.passage_emb is not None, "call index() first"
        q = self.encoder.encode(questions, desc="queries").to(self.device)
        best = (q @ self.passage_emb.T).argmax(dim=1).tolist()
        return [self.passage_texts[i] for i in best]

    def artifacts(self) -> list[tuple[str, Any, str]]:
        """The trained parts in use, with their records (what they trained on)."""
        from hyperrag.utils.artifacts import read_record

        return [(f"method.retriever.{name}", read_record(path), str(path))
                for name, path in (("classifier", self.classifier_path), ("policy", self.policy_path)) if path]

    # ---- refinement ----------------------------------------------------------------------------------
    def states(self, refinements: list[Refinement]) -> torch.Tensor:
        """Policy states [B, D]: the unit mean embedding of each refinement's frontier (the question at first)."""
        flat = [q for r in refinements for q in r.frontier]
        emb = self.encoder.encode(flat, desc="queries").float().cpu()
        owner = torch.tensor([b for b, r in enumerate(refinements) for _ in r.frontier])
        out = torch.zeros(len(refinements), emb.shape[1]).index_add_(0, owner, emb)
        return torch.nn.functional.normalize(out, dim=1)

    def next_actions(self, refinements: list[Refinement], step: int, allow_stop: bool,
                     valid: torch.Tensor | None = None) -> tuple[list[str], list[list[float]] | None]:
        """The action of each refinement at ``step``: the policy's greedy one (``stop`` only when allowed; with
        ``valid`` [B, 3], an action that would leave the query set unchanged is masked), or without a policy the
        fixed action at the first step and ``stop`` after it."""
        if self.policy is None:
            return ([self.settings.fixed_action] if step == 0 else [STOP]) * len(refinements), None
        probs = self.policy.probabilities(self.states(refinements), allow_stop=allow_stop, valid=valid)
        return [self.policy.actions[i] for i in probs.argmax(-1).tolist()], probs.tolist()

    def refine(self, questions: list[str]) -> tuple[list[Refinement], list[list[dict[str, Any]]]]:
        """Up to T refinement steps per question; returns the refinements and, per question, the policy's
        decisions (action, probabilities) at each step. With a policy, every action is carried out first and one
        that leaves the query set unchanged is masked (as in training, :meth:`RefinementEnv.valid_actions`); a
        question no action changes stays unrefined."""
        refinements = [Refinement.start(q) for q in questions]
        decisions: list[list[dict[str, Any]]] = [[] for _ in questions]
        active = list(range(len(questions)))
        for t in range(self.settings.max_refine_steps):
            if not active:
                break
            current = [refinements[i] for i in active]
            candidates, valid = None, None
            if self.policy is not None:
                acts = [a for a in self.policy.actions if a != STOP]  # a restricted policy's own actions
                candidates = {a: self._step(current, [(j, a) for j in range(len(current))]) for a in acts}
                valid = torch.tensor([[candidates[a][j].query_key != r.query_key for a in acts]
                                      for j, r in enumerate(current)], dtype=torch.bool).reshape(len(current), len(acts))
            actions, probs = self.next_actions(current, t, allow_stop=t > 0, valid=valid)
            for j, i in enumerate(active):
                row: dict[str, Any] = {"step": t, "action": actions[j]}
                if probs is not None:
                    row["policy_probs"] = {a: round(p, 4) for a, p in zip(self.policy.actions, probs[j])}
                decisions[i].append(row)
            todo = [(i, a) for i, a in zip(active, actions) if a not in (STOP, "none")]
            if candidates is not None:
                for j, i in enumerate(active):
                    if actions[j] in candidates:
                        refinements[i] = candidates[actions[j]][j]
            else:
                refinements = self._step(refinements, todo)
            active = [i for i, _ in todo]
        return refinements, decisions

    def _step(self, refinements: list[Refinement], todo: list[tuple[int, str]]) -> list[Refinement]:
        """Apply one action to the listed refinements (counting LLM refinement calls that did not run)."""
        if not todo:
            return refinements
        before = self.refiner.llm_failed
        stepped = self.refiner.step([refinements[i] for i, _ in todo], [a for _, a in todo])
        if self.settings.refine_with_llm:
            ran = self.refiner.llm_on
            self.skip("query_refinement", self.refiner.llm_failed - before if ran else
                      sum(len(refinements[i].frontier) for i, _ in todo))
        out = list(refinements)
        for (i, _), r in zip(todo, stepped):
            out[i] = r
        return out

    def requery_action(self, refinement: Refinement) -> str:
        """The feedback loop's next action: the policy's best (stop excluded), else the first action not taken yet."""
        if self.policy is not None:
            probs = self.policy.probabilities(self.states([refinement]), allow_stop=False)
            return self.policy.actions[int(probs.argmax(-1))]
        return next((a for a in ACTIONS if a not in refinement.actions), ACTIONS[0])

    # ---- dual-path retrieval -------------------------------------------------------------------------
    def search(self, refinements: list[Refinement], top_k: int
               ) -> tuple[torch.Tensor, torch.Tensor, list[list[CausalPath]], list[dict[str, Any]]]:
        """K = T_sem ∪ passages of C_graph, then the rest by cosine. Returns (indices [B, k], scores [B, k], paths,
        info); the scores are the semantic cosines (the ranking is the order, not the scores)."""
        assert self.passage_emb is not None, "call index() first"
        s = self.settings
        flat = [q for r in refinements for q in r.queries]
        owner = torch.tensor([b for b, r in enumerate(refinements) for _ in r.queries])
        emb = self.encoder.encode(flat, desc="queries").to(self.device)
        sims = emb @ self.passage_emb.T  # [Q, P]
        n_passages = sims.shape[1]
        dense = torch.full((len(refinements), n_passages), -1.0, device=self.device)
        dense = dense.scatter_reduce(0, owner.to(self.device).unsqueeze(1).expand_as(sims), sims, "amax").cpu()
        paths: list[list[CausalPath]] = [[] for _ in refinements]
        path_scores = torch.zeros(len(refinements), n_passages)
        if s.causal_retrieval and self.traversal is not None:
            per_query = self.traversal(emb.cpu())
            for b in range(len(refinements)):
                best: dict[tuple[int, ...], CausalPath] = {}
                for qi in (owner == b).nonzero().flatten().tolist():
                    for p in per_query[qi]:
                        if tuple(p.edges) not in best or best[tuple(p.edges)].score < p.score:
                            best[tuple(p.edges)] = p
                paths[b] = sorted(best.values(), key=lambda p: -p.score)[: self.traversal.max_paths]
            path_scores = self.traversal.passage_scores(paths, n_passages)
        k_out = min(top_k, n_passages)
        order = torch.argsort(dense, dim=1, descending=True)
        indices, info = [], []
        originals = self.encoder.encode([r.question for r in refinements], desc="queries")
        for b, r in enumerate(refinements):
            by_path = torch.argsort(path_scores[b], descending=True)
            causal_order = by_path[path_scores[b][by_path] > 0].tolist()  # C_graph's passages, best path first
            semantic, causal, ranked = knowledge_union(order[b].tolist(), causal_order, s.semantic_k, s.causal_k,
                                                       s.union_order)
            indices.append(ranked[:k_out])
            rewrites = self.encoder.encode(r.rewrites, desc="queries") if r.rewrites else torch.empty(0)
            srs = semantic_refinement_score(originals[b], rewrites)
            info.append({
                "refinement_similarity": None if srs is None else round(srs, 4),
                "knowledge": {"semantic": [self.passage_ids[j] for j in semantic],
                              "causal": [self.passage_ids[j] for j in causal]},
                "knowledge_ids": [self.passage_ids[j] for j in semantic + causal],
                "causal_edge_ids": sorted({e for p in paths[b] for e in p.edges}),
                "causal_path_depths": [p.depth for p in paths[b]],
                "causal_depth": max((p.depth for p in paths[b]), default=0),
                "causal_passage_ids": [self.passage_ids[j] for j in causal_order],
            })
        idx = torch.tensor(indices, dtype=torch.long)
        val = torch.gather(dense, 1, idx)
        return idx, val, paths, info

    def pairs_of(self, paths: list[CausalPath]) -> list[tuple[str, str, str, str]]:
        """C_graph's pairs for generation, best path first: ``(cause, effect, passage id, statement)``."""
        graph = self.causal_graph
        seen: dict[int, None] = {}
        for p in paths:
            for e in p.edges:
                seen.setdefault(e, None)
        return [(*graph.triple(e), graph.edge_info[e]["passage_id"], graph.edge_info[e].get("statement", ""))
                for e in seen][: self.settings.generation.max_pairs]

    def evaluate_refinements(self, refinements: list[Refinement], top_k: int, generate: bool
                             ) -> tuple[RetrievalOutput, list[list[CausalPath]]]:
        """Retrieval (and generation, without the feedback loop) for given refinements — one round, and the RL
        environment's entry point."""
        idx, val, paths, info = self.search(refinements, top_k)
        details = []
        for b, (r, inf) in enumerate(zip(refinements, info)):
            details.append({"actions": list(r.actions), "action": r.action, "refinement_source": r.source,
                            "queries": r.queries, **inf,
                            "causal_pairs": [list(p) for p in self.pairs_of(paths[b])] if paths[b] else [],
                            "causal_paths": [p.describe(self.causal_graph) for p in paths[b][: self.settings.details_paths]]})
        if generate:
            self._generate(refinements, idx, details)
        return RetrievalOutput(idx, val, details), paths

    def retrieve_with_actions(self, questions: list[str], actions: list[str], top_k: int,
                              generate: bool = False) -> RetrievalOutput:
        """One refinement step with the given action per question, then one round (no feedback loop)."""
        refinements = self.refiner.refine(questions, actions)
        return self.evaluate_refinements(refinements, top_k, generate)[0]

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        refinements, decisions = self.refine(questions)
        generate = self.settings.generation.enabled
        out, _ = self.evaluate_refinements(refinements, top_k, generate and self.llm_available)
        if generate and not self.llm_available:
            gen = self.generator
            for step in gen.steps:
                self.skip(step, len(questions))
            if self.settings.generation.max_requery:
                self.skip("feedback_loop", len(questions))
        for b, row in enumerate(out.details):
            row["refinement_steps"] = decisions[b]
        if generate and self.llm_available and self.settings.generation.max_requery:
            out = self._feedback(questions, refinements, out, top_k)
        for r, row in zip(refinements, out.details):
            self._totals["queries"] += 1
            self._totals["with_paths"] += int(bool(row["causal_edge_ids"]))
            for a in row["actions"] or ["none"]:
                self._actions_taken[a] = self._actions_taken.get(a, 0) + 1
        return out

    # ---- generation and the feedback loop ------------------------------------------------------------
    @property
    def generator(self):  # type: ignore[no-untyped-def]
        if self._generator is None:
            from hyperrag.causal.generation import CausalGenerator

            self._generator = CausalGenerator(self.llm, self.settings.generation, style=self.settings.answer_style)
        return self._generator

    def _generate(self, refinements: list[Refinement], idx: torch.Tensor, details: list[dict[str, Any]]) -> None:
        passages = [[(pid, self.passage_texts[self._position[pid]]) for pid in row["knowledge_ids"]]
                    for row in details]
        pairs = [[tuple(p) for p in row["causal_pairs"]] for row in details]
        options = [list(self._options.get(r.question, ())) for r in refinements]
        records = self.generator.run_batch([r.question for r in refinements], passages, pairs, options)
        for row, rec in zip(details, records):
            row["generation"] = rec
            row["answer"] = rec["answer"]
            if rec.get("short_answer"):  # explanatory: the bare answer EM / F1 score
                row["short_answer"] = rec["short_answer"]
            row["supporting_ids"] = [k for k in rec["supporting"] if not str(k).startswith(("pair:", "causal_"))]
            for step, n in rec["skipped"].items():
                self.skip(step, n)
            self._totals["fallbacks"] += int(rec["fallback_taken"])
            self._totals["fallbacks_rejected"] += int(rec["fallback_rejected"])
            self._totals["causal_checked"] += int(rec["s_causal_initial"] is not None)
            self._totals["rewrites"] += rec["rewrites"]

    def _feedback(self, questions: list[str], refinements: list[Refinement], out: RetrievalOutput,
                  top_k: int) -> RetrievalOutput:
        """Re-enter refinement and retrieval for questions whose answer fails the checks (at most ``max_requery``
        rounds, each one more action on the latest query); the round the checks rate best is kept
        (:func:`round_quality`; the earliest at a tie — a re-query that did not help changes nothing)."""
        rounds: list[list[tuple[dict[str, Any], torch.Tensor, torch.Tensor]]] = [
            [(row, out.indices[b], out.scores[b])] for b, row in enumerate(out.details)]
        can_refine = self.policy is not None or self.settings.fixed_action != "none"
        for rnd in range(1, self.settings.generation.max_requery + 1):
            failing = [b for b, rs in enumerate(rounds) if not rs[-1][0]["generation"]["checks_passed"]]
            if not failing or not can_refine:  # no refinement (Table 3's baseline): a re-query would repeat a round
                break
            todo = [(b, self.requery_action(refinements[b])) for b in failing]
            refinements = self._step(refinements, todo)
            again, _ = self.evaluate_refinements([refinements[b] for b in failing], top_k, generate=True)
            self._totals["requeried"] += len(failing)
            for j, b in enumerate(failing):
                previous = rounds[b][-1][0]
                new = again.details[j]
                new["refinement_steps"] = previous["refinement_steps"] + [
                    {"step": len(previous["refinement_steps"]), "action": todo[j][1], "requery_round": rnd}]
                rounds[b].append((new, again.indices[j], again.scores[j]))
        indices, scores, details = out.indices.clone(), out.scores.clone(), []
        for b, rs in enumerate(rounds):
            best = max(range(len(rs)), key=lambda r: (round_quality(rs[r][0]["generation"]), -r))
            row, indices[b], scores[b] = rs[best]
            row["feedback"] = [{"round": r, "actions": d["actions"], "answer": d["answer"],
                                "checks_passed": d["generation"]["checks_passed"],
                                "s_causal": d["generation"]["s_causal"],
                                "hallucination": d["generation"]["hallucination"], "kept": r == best}
                               for r, (d, _, _) in enumerate(rs)]
            details.append(row)
        return RetrievalOutput(indices, scores, details)

    # ---- reporting -----------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        t = self._totals
        s = self.settings
        info: dict[str, Any] = {
            "method": self.name, "semantic_k": s.semantic_k, "causal_k": s.causal_k, "union_order": s.union_order,
            "causal_retrieval": s.causal_retrieval, "traversal": as_dict(s.traversal),
            "policy": str(self.policy_path) if self.policy_path else None,
            "fixed_action": None if self.policy_path else s.fixed_action, "max_refine_steps": s.max_refine_steps,
            "classifier": str(self.classifier_path) if self.classifier_path else None,
            "refine_with_llm": self.refiner.llm_on, "refinement_llm_calls": self.refiner.llm_calls,
            "refinement_llm_failed": self.refiner.llm_failed, "actions_taken": dict(self._actions_taken),
            "queries_with_causal_paths": t["with_paths"],
            "generation": bool(s.generation.enabled and self.llm_available),
            "answer_style": s.answer_style, "causal_checked": t["causal_checked"], "fallbacks": t["fallbacks"],
            "fallbacks_rejected": t["fallbacks_rejected"], "rewrites": t["rewrites"], "requeried": t["requeried"],
        }
        if self.causal_index is not None:
            info["causal_graph"] = self.causal_graph.stats
            info["causal_index_dir"] = str(self.causal_index.directory)
        if self.index_dir:
            info["index_dir"] = str(self.index_dir)
        return info


__all__ = ["CDFRAGRetriever", "knowledge_union", "resolve_trained_checkpoint", "round_quality"]
