"""The refinement environment: one question, one action, the real CDF-RAG retrieval, one reward.

``reward = λ1·coverage + λ2·causal_depth + λ3·similarity + λ4·(1 − hallucination)`` where, for the question
refined by the action and retrieved by the dual-path pipeline (:class:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever`
with the refinement fixed to that action):

* ``coverage`` — share of the question's gold passages in the top ``k`` (training questions have gold);
* ``causal_depth`` — edges of the longest causal path found, divided by the traversal's ``max_depth`` (0–1);
* ``similarity`` — mean cosine between the original question and the rewrites (semantic drift penalty);
* ``hallucination`` — ``1 − supported/total`` over the claims of the answer generated from the retrieved
  context (claim extraction + claim support), only when ``hallucination=true`` and an LLM is available; else 0.

Outcomes are memoised per (question, action): actions are deterministic (LLM calls run at temperature 0 and
are cached), so a PPO rollout re-visiting a pair costs nothing.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from hyperrag.data.types import Query
from hyperrag.eval.retrieval import recall_at_k
from hyperrag.refinement.actions import ACTIONS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RewardWeights:
    coverage: float = 1.0  # λ1
    causal_depth: float = 0.2  # λ2
    similarity: float = 0.2  # λ3
    hallucination: float = 0.1  # λ4 (multiplies 1 − hallucination)


class RefinementEnv:
    """Args:
        retriever: an indexed :class:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever`.
        queries: the questions (with gold passage ids) the environment serves, by position.
        k: retrieval depth for coverage.
        weights: the λs.
        hallucination: measure hallucination with the LLM (answer + claim check per outcome).
        actions: the action set.
    """

    def __init__(self, retriever: Any, queries: Sequence[Query], k: int = 5,
                 weights: RewardWeights | dict[str, float] | None = None, hallucination: bool = False,
                 actions: Sequence[str] = ACTIONS) -> None:
        self.retriever = retriever
        self.queries = list(queries)
        self.k = k
        self.weights = weights if isinstance(weights, RewardWeights) else RewardWeights(**(weights or {}))
        self.hallucination = hallucination
        self.actions = list(actions)
        self.states = retriever.encoder.encode([q.question for q in self.queries], desc="states").float()
        self._memo: dict[tuple[int, str], dict[str, Any]] = {}
        self.env_calls = 0

    @property
    def llm_hallucination(self) -> bool:
        return self.hallucination and bool(getattr(self.retriever, "llm_available", False))

    def outcomes(self, ids: Sequence[int], actions: Sequence[str]) -> list[dict[str, Any]]:
        """Reward and its components for each (question id, action); memoised."""
        todo = [(i, a) for i, a in dict.fromkeys(zip(ids, actions)) if (i, a) not in self._memo]
        if todo:
            questions = [self.queries[i].question for i, _ in todo]
            out = self.retriever.retrieve_with_actions(questions, [a for _, a in todo], max(self.k, 10),
                                                       generate=self.llm_hallucination)
            self.env_calls += len(todo)
            for b, (i, a) in enumerate(todo):
                self._memo[(i, a)] = self._score(i, a, out.indices[b].tolist(), out.details[b])
        return [self._memo[(i, a)] for i, a in zip(ids, actions)]

    def _score(self, i: int, action: str, ranked: list[int], details: dict[str, Any]) -> dict[str, Any]:
        q = self.queries[i]
        ids = [self.retriever.passage_ids[j] for j in ranked]
        coverage = recall_at_k(ids, q.gold_ids, self.k) if q.gold_ids else 0.0
        depth = min(1.0, details.get("causal_depth", 0) / max(1, self.retriever.settings.traversal.max_depth))
        similarity = float(details.get("refinement_similarity", 1.0))
        hallucination = 0.0
        gen = details.get("generation")
        if gen and gen.get("hallucination") is not None:
            hallucination = float(gen["hallucination"])
        w = self.weights
        reward = (w.coverage * coverage + w.causal_depth * depth + w.similarity * similarity
                  + w.hallucination * (1.0 - hallucination))
        return {"reward": reward, "coverage": coverage, "causal_depth": depth, "similarity": similarity,
                "hallucination": hallucination, "action": action, "queries": details.get("queries", [])}

    def rewards(self, ids: Sequence[int], actions: Sequence[str]) -> list[float]:
        return [o["reward"] for o in self.outcomes(ids, actions)]

    def reward_table(self, ids: Sequence[int]) -> torch.Tensor:
        """[len(ids), A]: the reward of every action for every question."""
        flat = [(i, a) for i in ids for a in self.actions]
        r = self.rewards([i for i, _ in flat], [a for _, a in flat])
        return torch.tensor(r, dtype=torch.float32).reshape(len(ids), len(self.actions))

    def evaluate_policy(self, policy: Any, ids: Sequence[int]) -> dict[str, Any]:
        """Greedy policy vs uniform-random (exact expectation over actions) on ``ids``."""
        ids = list(ids)
        table = self.reward_table(ids)
        chosen = policy.act(self.states[ids], greedy=True)
        col = torch.tensor([self.actions.index(a) for a in chosen])
        pol = table[torch.arange(len(ids)), col]
        rnd = table.mean(dim=1)
        per_action = table.mean(dim=0)
        return {"policy_reward": float(pol.mean()), "policy_reward_sd": float(pol.std()) if len(ids) > 1 else 0.0,
                "random_reward": float(rnd.mean()), "random_reward_sd": float(rnd.std()) if len(ids) > 1 else 0.0,
                "oracle_reward": float(table.max(dim=1).values.mean()),
                "best_fixed_action": self.actions[int(per_action.argmax())],
                "best_fixed_reward": float(per_action.max()),
                "per_action_reward": {a: float(v) for a, v in zip(self.actions, per_action)},
                "policy_actions": {a: chosen.count(a) for a in self.actions},
                "policy_rewards": pol.tolist(), "random_rewards": rnd.tolist(), "questions": len(ids)}


def split_queries(queries: Sequence[Query], train: float, heldout: float | None = None,
                  seed: int = 0) -> tuple[list[int], list[int]]:
    """Shuffled train / held-out question positions (only questions with gold passages).

    ``train`` / ``heldout``: counts, or shares of the usable questions when < 1; ``heldout=None`` = the rest.
    """
    usable = [i for i, q in enumerate(queries) if q.gold_ids]
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


__all__ = ["RefinementEnv", "RewardWeights", "mean_sd", "split_queries"]
