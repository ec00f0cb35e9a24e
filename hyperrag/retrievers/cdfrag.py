"""CDF-RAG (causal dynamic feedback): refined query → dual-path retrieval → causal generation loop.

Per batch of questions:
  1. refine — the PPO refinement policy (a ``models/ppo/...`` checkpoint) picks expand / simplify / decompose
     from the question's embedding, or the configured ``fixed_action`` when there is no policy; the action is
     carried out by the LLM or its LLM-free stand-in (:mod:`hyperrag.refinement.actions`), giving a query set;
  2. dense path — every passage scored by its best cosine over the query set;
  3. causal path — depth-limited traversal of the directed causal graph (:mod:`hyperrag.causal.traversal`) from
     the causal nodes most similar to the queries; each passage holding an edge of a found path gets that
     path's score;
  4. merge — ``score = dense + path_weight × path score``: the dense top-k ∪ the passages of the causal paths,
     ranked together;
  5. generate (with an LLM and ``generation.enabled``) — causal context rewrite, grounded answer, causal
     consistency check with strict regeneration, claim check with rewrite (:mod:`hyperrag.causal.generation`);
     every step is in the query's ``details["generation"]``.

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
from hyperrag.refinement.actions import QueryRefiner, Refinement
from hyperrag.refinement.ppo import policy_compatibility
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs, topk_rows
from hyperrag.retrievers.settings import CDFRAGSettings

log = logging.getLogger(__name__)


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
        log.info("no %s artifact for %s that saw none of the %d queries scored here (cross-fit with cv_folds=K)",
                 task, data_name, len(unseen or ()))
    return found


class CDFRAGRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.CDFRAGSettings` — the trained parts
            (``classifier``, ``policy``, ``models_dir``), refinement (``fixed_action``, ``refine_with_llm``,
            ``expand_keywords``), the causal graph, its traversal and the dual-path merge (``causal``,
            ``traversal``, ``path_weight``), generation (``generation``), ``details_paths``, ``index_root``.
        encoder: the sentence embedder (passages, queries, causal nodes).
        llm: refinement, pair verification and generation; ``NoLLM`` runs the LLM-free form.
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
        self._generator: Any = None
        self._totals = {"queries": 0, "with_paths": 0, "depth_sum": 0.0, "similarity_sum": 0.0}
        self._actions_taken: dict[str, int] = {}

    # ---- indexing ------------------------------------------------------------------------------------
    def index(self, dataset: Dataset) -> None:
        self.passage_texts = [p.content for p in dataset.corpus.passages]
        self.passage_ids = dataset.corpus.ids
        triples, triples_key, self.passage_emb = None, None, None
        if self.index_dir:
            triples, triples_key = self._index_dir_triples(dataset)
        if self.passage_emb is None:
            self.passage_emb = self.encoder.encode(self.passage_texts, desc="passages")
        self.passage_emb = self.passage_emb.to(self.device)
        s = self.settings
        scored = [q.id for q in dataset.queries]
        # the pair classifier trains on corpus sentences, not questions: any artifact of this corpus
        self.classifier_path = resolve_trained_checkpoint(s.classifier, self.models_dir, "causal_pair", dataset.name)
        self.causal_index = load_or_build_causal_index(dataset, self.encoder, s.causal,
                                                       classifier_path=self.classifier_path, llm=self.llm,
                                                       root=s.index_root, openie_triples=triples,
                                                       openie_key=triples_key)
        self.traversal = CausalTraversal(self.causal_index.graph, s.traversal)
        self.policy_path = resolve_trained_checkpoint(s.policy, self.models_dir, "ppo", dataset.name,
                                                      policy_compatibility(s, self.encoder), unseen=scored)
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
    def choose_actions(self, questions: list[str]) -> tuple[list[str], list[list[float]] | None]:
        """The policy's greedy actions (and π) or the fixed action."""
        if self.policy is None:
            return [self.settings.fixed_action] * len(questions), None
        states = self.encoder.encode(questions, desc="queries")
        probs = self.policy.probabilities(states)
        return [self.policy.actions[i] for i in probs.argmax(-1).tolist()], probs.tolist()

    # ---- dual-path retrieval -------------------------------------------------------------------------
    def search(self, questions: list[str], refinements: list[Refinement], top_k: int
               ) -> tuple[torch.Tensor, torch.Tensor, list[list[CausalPath]], list[dict[str, Any]]]:
        """Dense ∪ causal-path ranking for refined queries. Returns (indices [B, k], scores [B, k], paths, info)."""
        assert self.passage_emb is not None and self.traversal is not None, "call index() first"
        flat = [q for r in refinements for q in r.queries]
        owner = torch.tensor([b for b, r in enumerate(refinements) for _ in r.queries])
        emb = self.encoder.encode(flat, desc="queries").to(self.device)
        sims = emb @ self.passage_emb.T  # [Q, P]
        dense = torch.full((len(questions), sims.shape[1]), -1.0, device=self.device)
        dense = dense.scatter_reduce(0, owner.to(self.device).unsqueeze(1).expand_as(sims), sims, "amax")
        per_query_paths = self.traversal(emb.cpu())
        paths: list[list[CausalPath]] = []
        for b in range(len(questions)):
            best: dict[tuple[int, ...], CausalPath] = {}
            for qi in (owner == b).nonzero().flatten().tolist():
                for p in per_query_paths[qi]:
                    if tuple(p.edges) not in best or best[tuple(p.edges)].score < p.score:
                        best[tuple(p.edges)] = p
            paths.append(sorted(best.values(), key=lambda p: -p.score)[: self.traversal.max_paths])
        path_scores = self.traversal.passage_scores(paths, sims.shape[1]).to(self.device)
        scores = dense + self.settings.path_weight * path_scores
        idx, val = topk_rows(scores, top_k)
        originals = self.encoder.encode(questions, desc="queries")
        info = []
        for b, r in enumerate(refinements):
            rewrites = self.encoder.encode(r.rewrites, desc="queries") if r.rewrites else torch.empty(0)
            sim = semantic_refinement_score(originals[b], rewrites)
            causal_passages = sorted({int(j) for j in path_scores[b].nonzero().flatten().tolist()})
            edge_ids = sorted({e for p in paths[b] for e in p.edges})
            info.append({"refinement_similarity": round(sim, 4), "causal_edge_ids": edge_ids,
                         "causal_depth": max((p.depth for p in paths[b]), default=0),
                         "causal_paths_found": len(paths[b]), "causal_passages": len(causal_passages),
                         "causal_passages_in_topk": sum(int(j) in set(causal_passages) for j in idx[b].tolist())})
        return idx.cpu(), val.cpu(), paths, info

    def retrieve_with_actions(self, questions: list[str], actions: list[str], top_k: int,
                              probs: list[list[float]] | None = None, generate: bool | None = None) -> RetrievalOutput:
        """Retrieval with the given refinement action per question (the RL environment's entry point)."""
        refinements = self.refiner.refine(questions, actions)
        idx, val, paths, info = self.search(questions, refinements, top_k)
        details = []
        graph = self.causal_graph
        shown = self.settings.details_paths
        for b, (r, inf) in enumerate(zip(refinements, info)):
            row: dict[str, Any] = {"action": r.action, "refinement_source": r.source, "queries": r.queries, **inf,
                                   "causal_paths": [p.describe(graph) for p in paths[b][: shown]]}
            if probs is not None:
                row["policy_probs"] = {a: round(p, 4) for a, p in zip(self.policy.actions, probs[b])}
            details.append(row)
            self._totals["queries"] += 1
            self._totals["with_paths"] += int(bool(paths[b]))
            self._totals["depth_sum"] += inf["causal_depth"]
            self._totals["similarity_sum"] += inf["refinement_similarity"]
            self._actions_taken[r.action] = self._actions_taken.get(r.action, 0) + 1
        do_generate = self.settings.generation.enabled if generate is None else generate
        if do_generate and self.llm_available:
            self._generate(questions, idx, paths, details)
        return RetrievalOutput(idx, val, details)

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        actions, probs = self.choose_actions(questions)
        return self.retrieve_with_actions(questions, actions, top_k, probs)

    # ---- generation ----------------------------------------------------------------------------------
    @property
    def generator(self):  # type: ignore[no-untyped-def]
        if self._generator is None:
            from hyperrag.causal.generation import CausalGenerator

            self._generator = CausalGenerator(self.llm, self.settings.generation)
        return self._generator

    def _generate(self, questions: list[str], idx: torch.Tensor, paths: list[list[CausalPath]],
                  details: list[dict[str, Any]]) -> None:
        graph = self.causal_graph
        top_n = self.generator.top_n
        passages = [[(self.passage_ids[j], self.passage_texts[j]) for j in row[:top_n]] for row in idx.tolist()]
        pairs = []
        for ps in paths:
            seen: dict[int, None] = {}
            for p in ps:
                for e in p.edges:
                    seen.setdefault(e, None)
            pairs.append([(*graph.triple(e), graph.edge_info[e]["passage_id"]) for e in seen])
        records = self.generator.run_batch(questions, passages, pairs)
        for row, rec in zip(details, records):
            row["generation"] = rec
            row["answer"] = rec["answer"]

    # ---- reporting -----------------------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        t = self._totals
        n = max(1, t["queries"])
        info: dict[str, Any] = {
            "method": self.name, "path_weight": self.settings.path_weight,
            "traversal": as_dict(self.settings.traversal),
            "policy": str(self.policy_path) if self.policy_path else None,
            "fixed_action": None if self.policy_path else self.settings.fixed_action,
            "classifier": str(self.classifier_path) if self.classifier_path else None,
            "refine_with_llm": self.refiner.llm_on, "refinement_llm_calls": self.refiner.llm_calls,
            "actions_taken": dict(self._actions_taken),
            "mean_causal_depth": round(t["depth_sum"] / n, 4),
            "mean_refinement_similarity": round(t["similarity_sum"] / n, 4),
            "queries_with_causal_paths": t["with_paths"],
            "generation": bool(self.settings.generation.enabled and self.llm_available),
        }
        if self.causal_index is not None:
            info["causal_graph"] = self.causal_graph.stats
            info["causal_index_dir"] = str(self.causal_index.directory)
        if self.index_dir:
            info["index_dir"] = str(self.index_dir)
        return info


__all__ = ["CDFRAGRetriever", "resolve_trained_checkpoint"]
