"""The refinement environment: a question, a chain of at most T actions, the real CDF-RAG retrieval, a reward.

Two readings of the paper's reward (``reward``), for the question refined by an action sequence and retrieved by
the dual-path pipeline (:meth:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever.evaluate_refinements`, the retriever's
own refiner — with its LLM when one is configured), each term in [0, 1]:

* ``a3`` (Appendix A.3): ``R = λ1·r + λ2·d + λ3·s + λ4·(1 − h)`` with
  - ``r`` relevance (``relevance``): ``gain`` — A.3's "whether the refinement *improves* the match between
    retrieved context and query intent": ``r = ½ + ½·(m(K) − m(K₀))``, the change of the match m between the
    question and the whole knowledge set K = T_sem ∪ C_graph over the unrefined question's K₀ (so the unrefined
    question scores ½ and a refinement whose K holds more of what the question needs scores higher). m is scored
    by something other than the retriever's embedding (``match``): ``judge`` — an LLM judge of how much of what
    the question needs K holds (``context_coverage``; with ``llm=oracle`` the share of the question's gold
    passages in K: a gold-informed upper bound), ``lexical`` — the LLM-free form, BM25-IDF-weighted share of the
    question's content words that K's passages hold (no cross-encoder ships its weights in a package); ``auto``
    = ``judge`` with an available LLM, else ``lexical``. Labelled older readings: ``context`` — the mean
    retriever-embedding cosine between the original question and the top ``k`` passages (the unrefined question's
    top-k maximises it by construction); ``gold_recall`` — recall@k of the gold passages;
  - ``d`` causal depth — edges of the longest causal path found, divided by the traversal's ``max_depth``;
  - ``s`` similarity to the original query — mean cosine between the original question and the rewrites, clipped
    to [0, 1] (1 without rewrites);
  - ``h`` hallucination — S_hallucination of the answer generated from the retrieved knowledge (claim extraction +
    claim support, after the method's corrections), when ``hallucination=true`` and an LLM is available
    (``hallucination_term``). **No credit for not answering**: an abstention (empty / "unknown"), an answer with
    no claim, or a claim check the model failed (its reply never parsed) gives h = 1; an infrastructure failure
    (transport error, no model, no gold for the oracle) is recorded (``h_status: infra_failure``), its λ4 term is
    left out, and :func:`infra_failures` lets a benchmark exclude the question;
* ``s22`` (§2.2): ``R = λ1·RetrievalCoverage + λ2·CausalDepth + λ3·ContextRelevance − λ4·HallucinationPenalty``
  with RetrievalCoverage = recall@k of the gold passages (labelled: cross-fit so a policy never trains on the
  questions it is scored on), CausalDepth = d, ContextRelevance = §3.3's mean embedding cosine between the question
  and K's passages, HallucinationPenalty = h (taken as ``λ4·(1 − h)``: the same ordering, a constant λ4 higher).

A refinement step that leaves the query set unchanged is not a distinct action: :meth:`valid_actions` masks it
(``mask_unchanged``), for the policy, the random baseline and the per-question best.

Each outcome also records, where the question has them, gold recall@k and full-chain recall@k of the ranking and
EM / F1 of the generated answer — for evaluation, never in a label-free reward. The empty sequence is the
unrefined question. States are the retriever's (the embedding of the current frontier). Refinements, states and
outcomes are memoised per (question, sequence): actions are deterministic (LLM calls run at temperature 0 and are
cached), so a PPO rollout re-visiting a sequence costs nothing.
"""

from __future__ import annotations

import itertools
import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from hyperrag.data.types import Query
from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k
from hyperrag.refinement.actions import ACTIONS, Refinement

log = logging.getLogger(__name__)

Seq = tuple[str, ...]


RELEVANCE: tuple[str, ...] = ("gain", "context", "gold_recall")
REWARDS: tuple[str, ...] = ("a3", "s22")
MATCH: tuple[str, ...] = ("auto", "judge", "lexical")
MATCH_SCOPES: tuple[str, ...] = ("knowledge", "top_k")
INFRA_ERRORS = frozenset(["timeout", "http_5xx", "rate_limit", "http_4xx", "connection", "protocol", "unavailable",
                          "no_gold"])  # ErrorKind.TRANSPORT + no model + no oracle gold: not the model's answer


def reward_hallucination(gen: dict[str, Any] | None) -> tuple[float | None, str]:
    """h for the reward from a generation record, and why: ``scored`` (S_hallucination), ``abstained``,
    ``no_claims`` or ``check_failed`` (h = 1: no λ4 credit), ``infra_failure`` or ``not_generated`` (None)."""
    from hyperrag.eval.text import is_abstention

    if not gen:
        return None, "not_generated"
    answer = str(gen.get("answer") or "")
    checks = [st for st in gen.get("steps", []) if st.get("step") == "claim_check"]
    if not answer.strip() or is_abstention(answer):
        return 1.0, "abstained"
    if not checks:
        return (None, "infra_failure") if gen.get("skipped", {}).get("grounded_answer") else (None, "not_generated")
    last = checks[-1]
    if not last.get("ok", False):
        return (None, "infra_failure") if str(last.get("error")) in INFRA_ERRORS else (1.0, "check_failed")
    if not last.get("claims"):
        return 1.0, "no_claims"
    return float(gen["hallucination"] if gen.get("hallucination") is not None else last["hallucination"]), "scored"


@dataclass(frozen=True)
class RewardWeights:
    relevance: float = 1.0  # λ1
    causal_depth: float = 0.2  # λ2
    similarity: float = 0.2  # λ3
    hallucination: float = 0.1  # λ4 (multiplies 1 − hallucination)


class RefinementEnv:
    """The settings have no defaults here: ``task/ppo.yaml``'s ``env`` node is their one source (callers pass it;
    tests compose it with :func:`~hyperrag.config.compose.task_arguments`).

    Args:
        retriever: an indexed :class:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever`.
        queries: the questions the environment serves, by position (gold passages only needed for
            ``relevance="gold_recall"`` and for the evaluation's recall figures).
        k: retrieval depth of the relevance term (and of the recall figures).
        weights: the λs.
        hallucination: the λ4 term from generated answers (needs an LLM; without one the term is constant).
        max_steps: T, actions per episode at most.
        actions: the refinement actions (``stop`` is the policy's, not an action here).
        reward: ``a3`` (r, d, s, 1 − h) or ``s22`` (coverage, depth, context relevance, − hallucination).
        relevance: a3's r: ``gain`` (the match gain of K over the unrefined K₀), ``context`` or ``gold_recall``
            (labelled older readings).
        match: the match m of ``gain``: ``judge`` (LLM ``context_coverage``), ``lexical`` or ``auto``.
        match_scope: what "retrieved context" m scores: ``knowledge`` — the whole knowledge set K = T_sem ∪
            C_graph the answer is generated from (default) — or ``top_k`` — the top ``k`` retrieved passages (the
            ranking a retrieval metric scores; A.3's "the match between retrieved context and query intent" allows
            both).
        mask_unchanged: a step that leaves the query set unchanged is not a distinct action.
        actions: the refinement actions a policy chooses from (default all three; a subset is the labelled
            restricted-action setting — outcomes, and the feedback loop inside them, are unchanged).
        tune_weights: ``None`` — the λs as given — or ``full_chain`` — λ1–λ4 chosen by
            :func:`~hyperrag.refinement.agreement.tune_env` on the training questions (A.3 calls the λs tunable)
            for the rank agreement of the step reward with Δ full-chain recall@k (labelled: reads those questions'
            gold passages; a trainer calls ``tune_env`` with its training questions only).
    """

    def __init__(self, retriever: Any, queries: Sequence[Query], *, k: int,
                 weights: RewardWeights | dict[str, float] | None, hallucination: bool, relevance: str,
                 reward: str, match: str, mask_unchanged: bool, max_steps: int = 1,
                 actions: Sequence[str] = ACTIONS, match_scope: str = "knowledge",
                 tune_weights: str | None = None) -> None:
        if relevance not in RELEVANCE:
            raise ValueError(f"relevance must be one of {RELEVANCE}, got {relevance!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if match not in MATCH:
            raise ValueError(f"match must be one of {MATCH}, got {match!r}")
        if match_scope not in MATCH_SCOPES:
            raise ValueError(f"match_scope must be one of {MATCH_SCOPES}, got {match_scope!r}")
        if tune_weights not in (None, "full_chain"):
            raise ValueError(f"tune_weights must be null or 'full_chain', got {tune_weights!r}")
        self.tune_weights = tune_weights
        self.tuning: dict[str, Any] | None = None
        unknown = [a for a in actions if a not in ACTIONS]
        if unknown or not actions or len(set(actions)) != len(actions):
            raise ValueError(f"actions must be distinct refinement actions of {ACTIONS}, got {list(actions)!r}")
        self.retriever = retriever
        self.queries = list(queries)
        self.k = k
        self.relevance = relevance
        self.reward = reward
        self.mask_unchanged = mask_unchanged
        llm_ok = bool(getattr(retriever, "llm_available", False))
        self.match = ("judge" if llm_ok else "lexical") if match == "auto" else match
        self.match_scope = match_scope
        self._idf: dict[str, float] | None = None
        self._match: dict[tuple[int, tuple[str, ...]], float] = {}
        self.judge_failed = 0
        self._question_emb: dict[int, torch.Tensor] = {}
        self.weights = weights if isinstance(weights, RewardWeights) else RewardWeights(**(weights or {}))
        self.hallucination = hallucination
        self.max_steps = max_steps
        self.actions = [a for a in ACTIONS if a in actions]  # the method's order, whatever order was given
        self._refinements: dict[tuple[int, Seq], Refinement] = {}
        self._states: dict[tuple[int, Seq], torch.Tensor] = {}
        self._memo: dict[tuple[int, Seq], dict[str, Any]] = {}
        self._raw: dict[tuple[int, Seq], tuple[list[int], dict[str, Any]]] = {}  # the retrieval each outcome scored
        self.env_calls = 0

    @property
    def llm_hallucination(self) -> bool:
        return self.hallucination and bool(getattr(self.retriever, "llm_available", False))

    @property
    def hallucination_term(self) -> str:
        """``answers`` (λ4 from generated answers), ``off (no LLM)`` or ``off``."""
        if self.llm_hallucination:
            return "answers"
        return "off (no LLM)" if self.hallucination else "off"

    # ---- sequences -----------------------------------------------------------------------------------
    def sequences(self) -> list[Seq]:
        """Every action sequence of length 1..T."""
        return [seq for n in range(1, self.max_steps + 1) for seq in itertools.product(self.actions, repeat=n)]

    def changes(self, i: int, seq: Seq) -> bool:
        """Whether the last step of ``seq`` changes the query set of question ``i`` (an unchanged rewrite is
        no distinct action)."""
        before, after = self.refinements([i, i], [seq[:-1], seq])
        return before.query_key != after.query_key

    def valid_actions(self, ids: Sequence[int], seqs: Sequence[Seq]) -> torch.Tensor:
        """BoolTensor [B, A]: the actions that change each (question, sequence)'s query set (all True without
        ``mask_unchanged``)."""
        if not self.mask_unchanged:
            return torch.ones(len(ids), len(self.actions), dtype=torch.bool)
        return torch.tensor([[self.changes(i, tuple(s) + (a,)) for a in self.actions] for i, s in zip(ids, seqs)],
                            dtype=torch.bool).reshape(len(ids), len(self.actions))

    def valid_sequences(self, i: int) -> list[Seq]:
        """The sequences of length 1..T whose every step changes question ``i``'s query set."""
        out: list[Seq] = []
        frontier: list[Seq] = [()]
        for _ in range(self.max_steps):
            nxt = []
            for seq in frontier:
                ok = self.valid_actions([i], [seq])[0].tolist()
                nxt += [seq + (a,) for a, v in zip(self.actions, ok) if v]
            out += nxt
            frontier = nxt
        return out

    def refinements(self, ids: Sequence[int], seqs: Sequence[Seq]) -> list[Refinement]:
        """The refinement of each (question, sequence), built step by step from memoised prefixes."""
        for depth in range(max((len(s) for s in seqs), default=0) + 1):
            todo = list(dict.fromkeys((i, tuple(s[:depth])) for i, s in zip(ids, seqs) if len(s) >= depth))
            todo = [key for key in todo if key not in self._refinements]
            if not todo:
                continue
            if depth == 0:
                for i, s in todo:
                    self._refinements[(i, s)] = Refinement.start(self.queries[i].question)
                continue
            prev = [self._refinements[(i, s[:-1])] for i, s in todo]
            stepped = self.retriever._step(prev, list(enumerate(s[-1] for _, s in todo)))
            for key, r in zip(todo, stepped):
                self._refinements[key] = r
        return [self._refinements[(i, tuple(s))] for i, s in zip(ids, seqs)]

    def states(self, ids: Sequence[int], seqs: Sequence[Seq]) -> torch.Tensor:
        """[B, D]: the policy state of each (question, sequence)."""
        keys = [(i, tuple(s)) for i, s in zip(ids, seqs)]
        todo = list(dict.fromkeys(k for k in keys if k not in self._states))
        if todo:
            refs = self.refinements([i for i, _ in todo], [s for _, s in todo])
            for key, st in zip(todo, self.retriever.states(refs)):
                self._states[key] = st
        return torch.stack([self._states[k] for k in keys]) if keys else torch.empty(0)

    # ---- outcomes ------------------------------------------------------------------------------------
    def outcomes(self, ids: Sequence[int], seqs: Sequence[Seq | str]) -> list[dict[str, Any]]:
        """Reward and its components for each (question id, action sequence); a plain action name is a sequence of
        one. Memoised."""
        keys = [(i, (s,) if isinstance(s, str) else tuple(s)) for i, s in zip(ids, seqs)]
        todo = [k for k in dict.fromkeys(keys) if k not in self._memo]
        gain = self.reward == "a3" and self.relevance == "gain"
        if gain:  # the gain needs the unrefined question's K₀ first
            base = [i for i in dict.fromkeys(i for i, s in todo if s) if (i, ()) not in self._memo]
            if base:
                self._evaluate([(i, ()) for i in base])
            todo = [k for k in todo if k not in self._memo]
        if todo:
            self._evaluate(todo)
        return [self._memo[k] for k in keys]

    @property
    def requery(self) -> bool:
        """Whether an outcome includes the method's feedback loop (the retriever's ``generation.max_requery`` with
        an LLM generating): a refined question whose answer fails the checks re-enters refinement (one more action,
        :meth:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever.requery_action`) and retrieval, and the round the checks
        rate best is the outcome. The unrefined question (the empty sequence, Table 3's baseline) never
        re-queries."""
        return self.llm_hallucination and bool(self.retriever.settings.generation.max_requery)

    def _evaluate(self, todo: list[tuple[int, Seq]]) -> None:
        refs = self.refinements([i for i, _ in todo], [s for _, s in todo])
        out, _ = self.retriever.evaluate_refinements(refs, max(self.k, 10), generate=self.llm_hallucination)
        refined = [b for b, (_, s) in enumerate(todo) if s]
        if self.requery and refined:  # the method's feedback loop, on the refined questions
            for row in out.details:
                row.setdefault("refinement_steps", [])
            # the retriever's own RetrievalOutput type (refinement sits below retrievers: no import of it here)
            sub = type(out)(out.indices[refined], out.scores[refined], [out.details[b] for b in refined])
            again = self.retriever._feedback([refs[b].question for b in refined], [refs[b] for b in refined], sub,
                                             max(self.k, 10))
            for j, b in enumerate(refined):
                out.indices[b], out.scores[b], out.details[b] = again.indices[j], again.scores[j], again.details[j]
        self.env_calls += len(todo)
        for b, (i, s) in enumerate(todo):
            self._raw[(i, s)] = (out.indices[b].tolist(), out.details[b])
        if self.reward == "a3" and self.relevance == "gain":
            self.matches([i for i, _ in todo], [self.match_ids(*self._raw[key]) for key in todo])
        for b, (i, s) in enumerate(todo):
            self._memo[(i, s)] = self._score(i, s, *self._raw[(i, s)])

    def question_embedding(self, i: int) -> torch.Tensor:
        """The original question's unit embedding [D] (memoised)."""
        if i not in self._question_emb:
            emb = self.retriever.encoder.encode([self.queries[i].question], desc="queries")[0]
            self._question_emb[i] = emb.float().cpu()
        return self._question_emb[i]

    def context_relevance(self, i: int, ranked: list[int]) -> float:
        """r (label-free): mean cosine between the original question and the top ``k`` passages, clipped to
        [0, 1]."""
        top = self.retriever.passage_emb[ranked[: self.k]].float().cpu()
        return float((top @ self.question_embedding(i)).mean().clamp(0.0, 1.0)) if len(top) else 0.0

    # ---- the match m(K, q) of the relevance gain ----------------------------------------------------------
    def idf(self) -> dict[str, float]:
        """BM25's IDF of every content word of the corpus (``log(1 + (N − df + ½)/(df + ½))``, memoised)."""
        if self._idf is None:
            import math

            from hyperrag.eval.text import content_tokens

            df: dict[str, int] = {}
            for text in self.retriever.passage_texts:
                for t in set(content_tokens(text)):
                    df[t] = df.get(t, 0) + 1
            n = len(self.retriever.passage_texts)
            self._idf = {t: math.log(1.0 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        return self._idf

    def lexical_match(self, question: str, passages: Sequence[str]) -> float:
        """LLM-free m(K, q): the BM25-IDF-weighted share of the question's content words that K's passages hold."""
        from hyperrag.eval.text import content_tokens

        idf = self.idf()
        terms = set(content_tokens(question))
        if not terms:
            return 0.0
        held = set().union(*(set(content_tokens(p)) for p in passages)) if passages else set()
        weight = {t: idf.get(t, max(idf.values(), default=1.0)) for t in terms}
        return sum(w for t, w in weight.items() if t in held) / sum(weight.values())

    def matches(self, ids: Sequence[int], knowledge: Sequence[Sequence[str]]) -> list[float]:
        """m(K, q) for each (question, K's passage ids), memoised: the LLM judge (``context_coverage``; a failed
        call falls back to the lexical form, counted in ``judge_failed``) or the lexical form."""
        keys = [(i, tuple(k)) for i, k in zip(ids, knowledge)]
        todo = [k for k in dict.fromkeys(keys) if k not in self._match]
        pos = getattr(self.retriever, "_position", None) or {p: j for j, p in enumerate(self.retriever.passage_ids)}
        texts = {k: [self.retriever.passage_texts[pos[p]] for p in k[1]] for k in todo}
        if todo and self.match == "judge":
            inputs = [{"question": self.queries[i].question, "passages": [(p, t) for p, t in zip(kk, texts[(i, kk)])]}
                      for i, kk in todo]
            for k, res in zip(todo, self.retriever.llm.complete_structured_batch("context_coverage", inputs)):
                if res.ok:
                    self._match[k] = float(res.value["coverage"])
                else:
                    self.judge_failed += 1
        for k in todo:
            if k not in self._match:
                self._match[k] = self.lexical_match(self.queries[k[0]].question, texts[k])
        return [self._match[k] for k in keys]

    def _score(self, i: int, seq: Seq, ranked: list[int], details: dict[str, Any]) -> dict[str, Any]:
        from hyperrag.eval.qa import exact_match, scored_answer, token_f1

        q = self.queries[i]
        ids = [self.retriever.passage_ids[j] for j in ranked]
        recall = recall_at_k(ids, q.gold_ids, self.k) if q.gold_ids else None
        full_chain = full_chain_at_k(ids, q.gold_ids, self.k) if q.gold_ids else None
        knowledge = list(details.get("knowledge_ids") or ids[: self.k])
        context = self.context_relevance(i, ranked)
        k_relevance = self.knowledge_relevance(i, knowledge)
        match = gain = None
        if self.reward == "a3" and self.relevance == "gain":
            match = self.matches([i], [self.match_ids(ranked, details)])[0]
            base = match if not seq else float(self._memo[(i, ())]["match"])
            gain = match - base
            relevance = min(1.0, max(0.0, 0.5 + 0.5 * gain))
        elif self.reward == "s22" or self.relevance == "gold_recall":
            relevance = float(recall or 0.0)
        else:
            relevance = context
        depth = min(1.0, details.get("causal_depth", 0) / max(1, self.retriever.settings.traversal.max_depth))
        sim = details.get("refinement_similarity")
        similarity = 1.0 if sim is None else min(1.0, max(0.0, float(sim)))
        gen = details.get("generation")
        h, h_status = reward_hallucination(gen) if self.llm_hallucination else (None, "off")
        em = f1 = None
        if gen and q.answers:
            short = scored_answer(gen.get("answer") or "", gen.get("short_answer"))
            em, f1 = exact_match(short, q.answers), token_f1(short, q.answers)
        third = k_relevance if self.reward == "s22" else similarity
        terms = {"r": relevance, "d": depth, "s": third, "h": h}
        reward = self.combine(terms)
        n_sem = len(details.get("knowledge", {}).get("semantic", []))
        n_causal = len(details.get("knowledge", {}).get("causal", []))
        return {"reward": reward, "terms": terms, "relevance": relevance, "context_relevance": context,
                "knowledge_relevance": k_relevance, "match": match, "match_gain": gain, "coverage": recall,
                "full_chain": full_chain, "causal_depth": depth, "similarity": similarity,
                "hallucination": h, "h_status": h_status, "infra_failure": h_status == "infra_failure",
                "em": em, "f1": f1, "actions": list(seq), "queries": details.get("queries", []),
                "requeried": len(details.get("feedback") or []) > 1,
                "kept_round": next((r["round"] for r in details.get("feedback") or [] if r["kept"]), 0),
                "k_size": n_sem + n_causal, "c_graph_share": n_causal / max(1, n_sem + n_causal)}

    def knowledge_relevance(self, i: int, knowledge: Sequence[str]) -> float:
        """§3.3's Context Relevance over K: mean embedding cosine between the original question and K's passages,
        clipped to [0, 1]."""
        pos = getattr(self.retriever, "_position", None) or {p: j for j, p in enumerate(self.retriever.passage_ids)}
        rows = [pos[p] for p in knowledge if p in pos]
        if not rows:
            return 0.0
        emb = self.retriever.passage_emb[rows].float().cpu()
        return float((emb @ self.question_embedding(i)).mean().clamp(0.0, 1.0))

    def match_ids(self, ranked: list[int], details: dict[str, Any]) -> list[str]:
        """The passage ids m scores (``match_scope``): K's (``knowledge``) or the top ``k`` ranked (``top_k``)."""
        top = [self.retriever.passage_ids[j] for j in ranked[: self.k]]
        return top if self.match_scope == "top_k" else list(details.get("knowledge_ids") or top)

    def combine(self, terms: dict[str, float | None], weights: RewardWeights | None = None) -> float:
        """R from its terms (``r``, ``d``, ``s`` — a3's similarity or s22's context relevance —, ``h``) and the λs
        (``weights``, default the environment's): λ1 r + λ2 d + λ3 s + λ4 (1 − h); without an LLM the λ4 term is
        the constant λ4 (rewards compare across runs), with one an unscored h leaves it out."""
        w = weights or self.weights
        reward = w.relevance * float(terms["r"]) + w.causal_depth * float(terms["d"]) + w.similarity * float(terms["s"])
        h = terms["h"]
        if h is not None:
            reward += w.hallucination * (1.0 - float(h))
        elif not self.llm_hallucination:
            reward += w.hallucination
        return reward

    def set_weights(self, weights: RewardWeights | dict[str, float]) -> None:
        """Replace the λs and re-score every memoised outcome (no retrieval runs again)."""
        self.weights = weights if isinstance(weights, RewardWeights) else RewardWeights(**weights)
        for o in self._memo.values():
            o["reward"] = self.combine(o["terms"])

    def derive(self, **changes: Any) -> RefinementEnv:
        """Another reading of the reward over the *same* retrievals: a new environment with ``changes`` to the
        settings (``reward``, ``relevance``, ``match``, ``match_scope``, ``weights``, ``actions``, ...) whose
        outcomes are re-scored from this one's memoised retrievals (refinements, states and the match cache
        shared; nothing is retrieved or generated again)."""
        settings = {"k": self.k, "weights": self.weights, "hallucination": self.hallucination,
                    "relevance": self.relevance, "reward": self.reward, "match": self.match,
                    "match_scope": self.match_scope, "mask_unchanged": self.mask_unchanged,
                    "max_steps": self.max_steps, "actions": self.actions, "tune_weights": self.tune_weights,
                    **changes}
        new = RefinementEnv(self.retriever, self.queries, **settings)
        new._refinements, new._states, new._match, new._question_emb = (self._refinements, self._states,
                                                                        self._match, self._question_emb)
        new._idf, new._raw = self._idf, self._raw
        keys = sorted(self._raw, key=lambda key: len(key[1]))  # the unrefined K₀ first (the gain's base)
        if new.reward == "a3" and new.relevance == "gain":
            new.matches([i for i, _ in keys], [new.match_ids(*self._raw[key]) for key in keys])
        for i, s in keys:
            new._memo[(i, s)] = new._score(i, s, *self._raw[(i, s)])
        new.env_calls = self.env_calls
        return new

    def rewards(self, ids: Sequence[int], seqs: Sequence[Seq | str]) -> list[float]:
        return [o["reward"] for o in self.outcomes(ids, seqs)]

    def reward_table(self, ids: Sequence[int]) -> torch.Tensor:
        """[len(ids), S]: the reward of every action sequence (:meth:`sequences`) for every question (and, memoised
        alongside, the unrefined question's)."""
        seqs = self.sequences()
        flat = [(i, s) for i in ids for s in [(), *seqs]]
        r = self.rewards([i for i, _ in flat], [s for _, s in flat])
        table = torch.tensor(r, dtype=torch.float32).reshape(len(ids), len(seqs) + 1)
        return table[:, 1:]

    # ---- policies ------------------------------------------------------------------------------------
    def greedy_sequences(self, policy: Any, ids: Sequence[int]) -> list[Seq]:
        """The policy's greedy episode for each question (unchanged rewrites masked; an episode whose first step has
        no valid action stays unrefined)."""
        seqs: list[Seq] = [() for _ in ids]
        active = list(range(len(ids)))
        for t in range(self.max_steps):
            if not active:
                break
            valid = self.valid_actions([ids[j] for j in active], [seqs[j] for j in active])
            keep = [n for n, j in enumerate(active) if t > 0 or bool(valid[n].any())]
            active, valid = [active[n] for n in keep], valid[keep]
            if not active:
                break
            chosen = policy.act(self.states([ids[j] for j in active], [seqs[j] for j in active]), greedy=True,
                                allow_stop=t > 0, valid=valid)
            nxt = []
            for j, a in zip(active, chosen):
                if a in self.actions:
                    seqs[j] = seqs[j] + (a,)
                    nxt.append(j)
            active = nxt
        return seqs

    def random_value(self, i: int, key: str = "reward") -> float:
        """The exact expectation of ``key`` at the end of a uniformly random episode (each step: one of the valid
        actions, or after the first step stop, uniformly; no valid first action: the unrefined question)."""
        def value(seq: Seq) -> float:
            here = float(self.outcomes([i], [seq])[0][key] or 0.0)
            if len(seq) == self.max_steps:
                return here
            ok = self.valid_actions([i], [seq])[0].tolist()
            choices = [value(seq + (a,)) for a, v in zip(self.actions, ok) if v]
            if seq or not choices:  # stop allowed after the first step
                choices.append(here)
            return statistics.fmean(choices)

        return value(())

    def best_outcome(self, i: int) -> dict[str, Any]:
        """The per-question best valid sequence's outcome (hindsight; the unrefined question when none is valid)."""
        seqs = self.valid_sequences(i) or [()]
        return max(self.outcomes([i] * len(seqs), seqs), key=lambda o: o["reward"])

    def evaluate_policy(self, policy: Any, ids: Sequence[int], select_ids: Sequence[int] | None = None
                        ) -> dict[str, Any]:
        """Greedy policy vs uniform-random (exact expectation) vs the best fixed single action (chosen on
        ``select_ids``, e.g. the training questions; default ``ids``) vs the per-question best sequence, on ``ids``:
        final reward and gold recall@k (0 for a question without gold) of each."""
        ids = list(ids)
        self.reward_table(ids + list(select_ids or []))
        seqs = self.greedy_sequences(policy, ids)
        pol = self.outcomes(ids, seqs)
        pol_r = torch.tensor([o["reward"] for o in pol])
        rnd_r = torch.tensor([self.random_value(i) for i in ids])
        per_action = {a: torch.tensor(self.rewards(ids, [(a,)] * len(ids))) for a in self.actions}
        chooser = list(select_ids) if select_ids else ids
        on_select = {a: statistics.fmean(self.rewards(chooser, [(a,)] * len(chooser))) for a in self.actions}
        best = max(self.actions, key=lambda a: on_select[a])
        n = len(ids)
        return {"policy_reward": float(pol_r.mean()), "policy_reward_sd": float(pol_r.std()) if n > 1 else 0.0,
                "random_reward": float(rnd_r.mean()), "random_reward_sd": float(rnd_r.std()) if n > 1 else 0.0,
                "oracle_reward": statistics.fmean(self.best_outcome(i)["reward"] for i in ids),
                "best_fixed_action": best, "best_fixed_reward": float(per_action[best].mean()),
                "per_action_reward": {a: float(v.mean()) for a, v in per_action.items()},
                "policy_coverage": statistics.fmean(o["coverage"] or 0.0 for o in pol),
                "random_coverage": statistics.fmean(self.random_value(i, "coverage") for i in ids),
                "best_fixed_coverage": statistics.fmean(o["coverage"] or 0.0
                                                        for o in self.outcomes(ids, [(best,)] * n)),
                "policy_sequences": {"+".join(s) or "none": sum(x == s for x in seqs) for s in dict.fromkeys(seqs)},
                "policy_episode_length": statistics.fmean(len(s) for s in seqs),
                "policy_rewards": pol_r.tolist(), "random_rewards": rnd_r.tolist(), "questions": n}


def split_queries(queries: Sequence[Query], train: float, heldout: float | None = None,
                  seed: int = 0, need_gold: bool = False) -> tuple[list[int], list[int]]:
    """Shuffled train / held-out question positions (with ``need_gold``, only questions with gold passages).

    ``train`` / ``heldout``: counts, or shares of the usable questions when < 1; ``heldout=None`` = the rest.
    """
    usable = [i for i, q in enumerate(queries) if q.gold_ids or not need_gold]
    gen = torch.Generator().manual_seed(seed)
    order = [usable[i] for i in torch.randperm(len(usable), generator=gen).tolist()]
    n_train = round(train * len(order)) if isinstance(train, float) and train < 1 else int(train)
    n_train = max(1, min(n_train, len(order) - 1)) if len(order) > 1 else len(order)
    rest = order[n_train:]
    if heldout is not None:
        n_held = round(heldout * len(order)) if isinstance(heldout, float) and heldout < 1 else int(heldout)
        rest = rest[:n_held]
    return order[:n_train], rest


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    values = list(values)
    return (statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0)


__all__ = ["MATCH", "MATCH_SCOPES", "RELEVANCE", "REWARDS", "RefinementEnv", "RewardWeights", "mean_sd", "reward_hallucination",
           "split_queries"]
