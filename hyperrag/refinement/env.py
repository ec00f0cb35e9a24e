"""The refinement environment: a question, a chain of at most T actions, the real CDF-RAG retrieval, a reward.

``R = λ1·r + λ2·d + λ3·s + λ4·(1 − h)`` (CDF-RAG Appendix A.3), each term normalised to [0, 1], for the question
refined by an action sequence and retrieved by the dual-path pipeline
(:meth:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever.evaluate_refinements`, the retriever's own refiner — with its
LLM when one is configured):

* ``r`` relevance of the retrieved context to the query's intent (``relevance``): ``context`` — the mean cosine
  between the *original* question and the top ``k`` retrieved passages (the embedder's, clipped to [0, 1]; no
  label needed, so any question set trains it); ``gold_recall`` — the share of the question's gold passages in the
  top ``k`` (a labelled research reward, not the paper's: only questions with gold passages train);
* ``d`` causal depth — edges of the longest causal path found, divided by the traversal's ``max_depth``;
* ``s`` similarity to the original query — mean cosine between the original question and the rewrites, clipped to
  [0, 1] (1 without rewrites);
* ``h`` hallucination — S_hallucination of the answer generated from the retrieved knowledge (claim extraction +
  claim support, after the method's corrections), when ``hallucination=true`` and an LLM is available; else 0
  (``hallucination_term`` says which).

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


RELEVANCE: tuple[str, ...] = ("context", "gold_recall")


@dataclass(frozen=True)
class RewardWeights:
    relevance: float = 1.0  # λ1
    causal_depth: float = 0.2  # λ2
    similarity: float = 0.2  # λ3
    hallucination: float = 0.1  # λ4 (multiplies 1 − hallucination)


class RefinementEnv:
    """Args:
        retriever: an indexed :class:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever`.
        queries: the questions the environment serves, by position (gold passages only needed for
            ``relevance="gold_recall"`` and for the evaluation's recall figures).
        k: retrieval depth of the relevance term (and of the recall figures).
        weights: the λs.
        hallucination: the λ4 term from generated answers (needs an LLM; without one the term is constant).
        max_steps: T, actions per episode at most.
        actions: the refinement actions (``stop`` is the policy's, not an action here).
        relevance: the r term: ``context`` (label-free, the paper's) or ``gold_recall`` (labelled).
    """

    def __init__(self, retriever: Any, queries: Sequence[Query], k: int = 5,
                 weights: RewardWeights | dict[str, float] | None = None, hallucination: bool = False,
                 max_steps: int = 1, actions: Sequence[str] = ACTIONS, relevance: str = "context") -> None:
        if relevance not in RELEVANCE:
            raise ValueError(f"relevance must be one of {RELEVANCE}, got {relevance!r}")
        self.retriever = retriever
        self.queries = list(queries)
        self.k = k
        self.relevance = relevance
        self._question_emb: dict[int, torch.Tensor] = {}
        self.weights = weights if isinstance(weights, RewardWeights) else RewardWeights(**(weights or {}))
        self.hallucination = hallucination
        self.max_steps = max_steps
        self.actions = list(actions)
        self._refinements: dict[tuple[int, Seq], Refinement] = {}
        self._states: dict[tuple[int, Seq], torch.Tensor] = {}
        self._memo: dict[tuple[int, Seq], dict[str, Any]] = {}
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
        if todo:
            refs = self.refinements([i for i, _ in todo], [s for _, s in todo])
            out, _ = self.retriever.evaluate_refinements(refs, max(self.k, 10), generate=self.llm_hallucination)
            self.env_calls += len(todo)
            for b, (i, s) in enumerate(todo):
                self._memo[(i, s)] = self._score(i, s, out.indices[b].tolist(), out.details[b])
        return [self._memo[k] for k in keys]

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

    def _score(self, i: int, seq: Seq, ranked: list[int], details: dict[str, Any]) -> dict[str, Any]:
        from hyperrag.eval.qa import exact_match, scored_answer, token_f1

        q = self.queries[i]
        ids = [self.retriever.passage_ids[j] for j in ranked]
        recall = recall_at_k(ids, q.gold_ids, self.k) if q.gold_ids else None
        full_chain = full_chain_at_k(ids, q.gold_ids, self.k) if q.gold_ids else None
        context = self.context_relevance(i, ranked)
        relevance = context if self.relevance == "context" else float(recall or 0.0)
        depth = min(1.0, details.get("causal_depth", 0) / max(1, self.retriever.settings.traversal.max_depth))
        sim = details.get("refinement_similarity")
        similarity = 1.0 if sim is None else min(1.0, max(0.0, float(sim)))
        hallucination = 0.0
        em = f1 = None
        gen = details.get("generation")
        if gen and gen.get("hallucination") is not None:
            hallucination = float(gen["hallucination"])
        if gen and q.answers:
            short = scored_answer(gen.get("answer") or "", gen.get("short_answer"))
            em, f1 = exact_match(short, q.answers), token_f1(short, q.answers)
        w = self.weights
        reward = (w.relevance * relevance + w.causal_depth * depth + w.similarity * similarity
                  + w.hallucination * (1.0 - hallucination))
        return {"reward": reward, "relevance": relevance, "context_relevance": context, "coverage": recall,
                "full_chain": full_chain, "causal_depth": depth, "similarity": similarity,
                "hallucination": hallucination, "em": em, "f1": f1, "actions": list(seq),
                "queries": details.get("queries", [])}

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
        """The policy's greedy episode for each question."""
        seqs: list[Seq] = [() for _ in ids]
        active = list(range(len(ids)))
        for t in range(self.max_steps):
            if not active:
                break
            chosen = policy.act(self.states([ids[j] for j in active], [seqs[j] for j in active]), greedy=True,
                                allow_stop=t > 0)
            nxt = []
            for j, a in zip(active, chosen):
                if a in self.actions:
                    seqs[j] = seqs[j] + (a,)
                    nxt.append(j)
            active = nxt
        return seqs

    def random_value(self, i: int, key: str = "reward") -> float:
        """The exact expectation of ``key`` at the end of a uniformly random episode (first step: one of the
        actions; later steps: an action or stop, uniformly)."""
        def value(seq: Seq) -> float:
            if len(seq) == self.max_steps:
                return float(self.outcomes([i], [seq])[0][key] or 0.0)
            choices = [value(seq + (a,)) for a in self.actions]
            if seq:  # stop allowed after the first step
                choices.append(float(self.outcomes([i], [seq])[0][key] or 0.0))
            return statistics.fmean(choices)

        return value(())

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
        table = self.reward_table(ids)
        n = len(ids)
        return {"policy_reward": float(pol_r.mean()), "policy_reward_sd": float(pol_r.std()) if n > 1 else 0.0,
                "random_reward": float(rnd_r.mean()), "random_reward_sd": float(rnd_r.std()) if n > 1 else 0.0,
                "oracle_reward": float(table.max(dim=1).values.mean()),
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


__all__ = ["RELEVANCE", "RefinementEnv", "RewardWeights", "mean_sd", "split_queries"]
