"""Does the reward rank refinements the way the retrieval objective does? And the reward readings chosen for it.

Issue 46: A.3's reward (λ1 r + λ2 d + λ3 s + λ4 (1 − h)) prefers ``expand`` while FCR@5 prefers ``decompose``, so
PPO learns what the reward says. Three instruments, all over one environment's memoised outcomes (nothing is
retrieved again):

* :func:`reward_agreement` — over question × valid action sequence, Spearman's ρ between the step reward
  R(seq) − R(none) and Δmetric = metric(seq) − metric(none) (the retrieval objective: FCR@5 by default), with a
  percentile bootstrap over questions (each resampled with all its sequences); the within-question pairwise
  concordance (over the pairs of a question's sequences whose metric differs: the share the reward orders the same
  way, a reward tie counting ½) — what a policy choosing per question needs; and the metric of the reward's
  per-question best sequence (hindsight) beside the metric's own per-question best (the ceiling).
* :func:`tune_weights` — the λs, A.3's "tunable weights", chosen on the *given* questions (a cross-fitting caller
  passes the training folds only) from a grid, for the rank agreement of the step reward with the retrieval
  objective: the named setting ``tune_weights: full_chain`` (labelled: it reads gold passages of the training
  questions).
* :func:`best_action_subset` — the ``n`` actions whose per-question best (hindsight, by the metric) is highest on the
  given questions: the restricted action set a cross-fitted run chooses on its training folds.
"""

from __future__ import annotations

import itertools
import logging
import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from hyperrag.refinement.env import RefinementEnv, RewardWeights

#: the λs tried by :func:`tune_weights`: λ1 (relevance), λ2 (causal depth), λ3 (similarity / context relevance),
#: λ4 (1 − hallucination)
WEIGHT_GRID: dict[str, tuple[float, ...]] = {"relevance": (0.25, 0.5, 1.0),
                                             "causal_depth": (0.0, 0.1, 0.2, 0.5),
                                             "similarity": (0.0, 0.05, 0.1, 0.2, 0.5),
                                             "hallucination": (0.0, 0.1, 0.2, 0.5, 1.0)}
PAPER_WEIGHTS = RewardWeights()

log = logging.getLogger(__name__)


def _value(o: dict[str, Any], key: str) -> float:
    return float(o[key] or 0.0)


def _pool(env: RefinementEnv, ids: Iterable[int]) -> dict[int, list[tuple[tuple[str, ...], dict[str, Any]]]]:
    """Per question: (sequence, outcome) of the unrefined question first, then every valid sequence."""
    out = {}
    for i in ids:
        seqs = [(), *env.valid_sequences(i)]
        out[i] = list(zip(seqs, env.outcomes([i] * len(seqs), seqs)))
    return out


def best_by_reward(pool: list[tuple[tuple[str, ...], dict[str, Any]]], metric: str,
                   rewards: Sequence[float] | None = None) -> float:
    """The metric of the reward's best valid sequence of one question (hindsight; a reward tie: the mean metric of
    the tied sequences; no valid sequence: the unrefined question's)."""
    start = 1 if len(pool) > 1 else 0
    rows = pool[start:]
    r = list(rewards[start:]) if rewards is not None else [o["reward"] for _, o in rows]
    top = max(r)
    return statistics.fmean(_value(o, metric) for (_, o), x in zip(rows, r) if x >= top - 1e-12)


def pairwise_concordance(pool: list[tuple[tuple[str, ...], dict[str, Any]]], metric: str,
                         rewards: Sequence[float] | None = None) -> tuple[float, int]:
    """(sum of concordance, pairs) over the pairs of a question's valid sequences whose metric differs."""
    rows = pool[1:]
    r = list(rewards[1:]) if rewards is not None else [o["reward"] for _, o in rows]
    hit, n = 0.0, 0
    for (a, (_, oa)), (b, (_, ob)) in itertools.combinations(enumerate(rows), 2):
        dm = _value(oa, metric) - _value(ob, metric)
        if abs(dm) < 1e-12:
            continue
        dr = r[a] - r[b]
        hit += 0.5 if abs(dr) < 1e-12 else float((dr > 0) == (dm > 0))
        n += 1
    return hit, n


def _per_question(pool: dict[int, list[tuple[tuple[str, ...], dict[str, Any]]]], ids: Sequence[int], metric: str,
                  rewards_of: Callable[[int], list[float]]
                  ) -> tuple[list[tuple[int, float, float]], dict[int, tuple[float, int]], list[float]]:
    """Over ``ids``: every (question, ΔR, Δmetric) of a valid sequence against the unrefined question, each
    question's :func:`pairwise_concordance` and the metric of its reward-best sequence (:func:`best_by_reward`);
    ``rewards_of(i)``: question ``i``'s rewards, in ``pool[i]``'s order."""
    rows, conc, best = [], {}, []
    for i in ids:
        r = rewards_of(i)
        base_r, base_m = r[0], _value(pool[i][0][1], metric)
        for (_, o), x in zip(pool[i][1:], r[1:]):
            rows.append((i, x - base_r, _value(o, metric) - base_m))
        conc[i] = pairwise_concordance(pool[i], metric, r)
        best.append(best_by_reward(pool[i], metric, r))
    return rows, conc, best


def reward_agreement(env: RefinementEnv, ids: Sequence[int], metric: str = "full_chain",
                     weights: dict[int, RewardWeights] | RewardWeights | None = None, boot: int = 2000,
                     seed: int = 0) -> dict[str, Any]:
    """How the reward agrees with ``metric`` over ``ids`` (see the module doc). ``weights``: the λs (per question,
    e.g. each held-out question's fold's cross-fitted choice; default the environment's)."""
    from scipy.stats import spearmanr

    pool = _pool(env, ids)

    def rewards_of(i: int) -> list[float]:
        w = weights.get(i) if isinstance(weights, dict) else weights
        return [env.combine(o["terms"], w) for _, o in pool[i]]

    rows, conc, best = _per_question(pool, ids, metric, rewards_of)
    ceil = [max(_value(o, metric) for _, o in pool[i]) for i in ids]
    out: dict[str, Any] = {"questions": len(ids), "pairs": len(rows),
                           "reward_best_metric": round(100 * statistics.fmean(best), 2) if best else None,
                           "ceiling_metric": round(100 * statistics.fmean(ceil), 2) if ceil else None}
    pairs = sum(n for _, n in conc.values())
    out["concordant_pairs"] = pairs
    out["concordance"] = round(sum(h for h, _ in conc.values()) / pairs, 3) if pairs else None
    if len(rows) < 3:
        return out
    arr = np.array([r[1:] for r in rows], dtype=float)
    qid = np.array([r[0] for r in rows])
    rho, p = spearmanr(arr[:, 0], arr[:, 1]) if arr[:, 0].std() > 0 and arr[:, 1].std() > 0 else (float("nan"), 1.0)
    rng = np.random.default_rng(seed)
    qs = np.unique(qid)
    at = {q: np.flatnonzero(qid == q) for q in qs}
    rhos, concs = [], []
    for _ in range(boot):
        pick = rng.choice(qs, len(qs))
        rows_b = np.concatenate([at[q] for q in pick])
        a, b = arr[rows_b, 0], arr[rows_b, 1]
        if a.std() > 0 and b.std() > 0:
            rhos.append(spearmanr(a, b)[0])
        n_b = sum(conc[int(q)][1] for q in pick)
        if n_b:
            concs.append(sum(conc[int(q)][0] for q in pick) / n_b)
    rhos = [x for x in rhos if np.isfinite(x)]
    lo, hi = np.percentile(rhos, [2.5, 97.5]) if rhos else (float("nan"), float("nan"))
    if not np.isfinite(rho):  # a constant reward (e.g. λ4 alone with h constant): no ranking to correlate
        rho, p = float("nan"), 1.0
    out.update({"spearman": round(float(rho), 3) if np.isfinite(rho) else None, "spearman_p": round(float(p), 4),
                "spearman_ci95": f"[{lo:.3f}, {hi:.3f}]"})
    if concs:
        clo, chi = np.percentile(concs, [2.5, 97.5])
        out["concordance_ci95"] = f"[{clo:.3f}, {chi:.3f}]"
    out["interval"] = "percentile bootstrap over questions (each with all its sequences), 2,000 resamples"
    return out


def weight_grid(grid: dict[str, Sequence[float]] | None = None) -> list[RewardWeights]:
    """Every λ of the grid."""
    g = grid or WEIGHT_GRID
    keys = ("relevance", "causal_depth", "similarity", "hallucination")
    return [RewardWeights(*vals) for vals in itertools.product(*(g[k] for k in keys))]


def _spearman(x: Sequence[float], y: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 3 or a.std() == 0 or b.std() == 0:
        return -1.0
    rho = spearmanr(a, b)[0]
    return float(rho) if np.isfinite(rho) else -1.0


def tune_weights(env: RefinementEnv, ids: Sequence[int], metric: str = "full_chain",
                 grid: dict[str, Sequence[float]] | None = None) -> tuple[RewardWeights, dict[str, Any]]:
    """The λs of the grid whose step reward R(seq) − R(none) has the highest Spearman ρ with Δ``metric`` over
    question × valid sequence of ``ids`` (only these questions' gold is read: pass the training folds) — the
    reward that ranks refinements, within and across questions, most as the retrieval objective does; ties: the
    higher pairwise concordance, then the metric of the reward's per-question best, then the λs nearest the
    defaults (L1). Returns the λs and what decided it (with the defaults' figures beside them)."""
    pool = _pool(env, ids)

    def score(w: RewardWeights) -> tuple[float, float, float, float]:
        rows, conc, best = _per_question(pool, ids, metric, lambda i: [env.combine(o["terms"], w) for _, o in pool[i]])
        hit, n = sum(h for h, _ in conc.values()), sum(k for _, k in conc.values())
        dr, dm = [r[1] for r in rows], [r[2] for r in rows]
        dist = sum(abs(getattr(w, f) - getattr(PAPER_WEIGHTS, f))
                   for f in ("relevance", "causal_depth", "similarity", "hallucination"))
        return _spearman(dr, dm), (hit / n if n else 0.0), statistics.fmean(best), -dist

    scored = [(score(w), w) for w in weight_grid(grid)]
    (top, w) = max(scored, key=lambda x: x[0])
    paper = score(PAPER_WEIGHTS)
    return w, {"criterion": "spearman(ΔR, Δ" + metric + ")", "spearman": round(top[0], 3),
               "concordance": round(top[1], 3), "metric_of_reward_best": round(100 * top[2], 2),
               "paper_spearman": round(paper[0], 3), "paper_concordance": round(paper[1], 3),
               "paper_metric_of_reward_best": round(100 * paper[2], 2), "candidates": len(scored),
               "weights": w.__dict__}


def best_action_subset(env: RefinementEnv, ids: Sequence[int], n: int, metric: str = "full_chain"
                       ) -> tuple[list[str], dict[str, float]]:
    """The ``n`` actions (of ``env.actions``) whose per-question best single action, by ``metric`` in hindsight,
    is highest on ``ids`` (ties: the subset holding the best fixed action, then the method's order)."""
    per = {a: [_value(o, metric) for o in env.outcomes(list(ids), [(a,)] * len(ids))] for a in env.actions}
    fixed = max(env.actions, key=lambda a: statistics.fmean(per[a]))
    scores = {}
    for sub in itertools.combinations(env.actions, n):
        scores["+".join(sub)] = statistics.fmean(max(per[a][j] for a in sub) for j in range(len(ids)))
    best = max(itertools.combinations(env.actions, n), key=lambda sub: (scores["+".join(sub)], fixed in sub))
    return list(best), {k: round(100 * v, 2) for k, v in scores.items()}


def tune_env(env: RefinementEnv, ids: Sequence[int]) -> dict[str, Any] | None:
    """With ``env.tune_weights`` set, choose the λs on the questions ``ids`` (the training questions: their gold is
    read) and re-score every memoised outcome of ``env`` with them; returns what decided it (``None`` without
    tuning)."""
    if not env.tune_weights:
        return None
    w, env.tuning = tune_weights(env, list(ids), metric=env.tune_weights)
    env.set_weights(w)
    log.info("reward λs tuned on %d training questions: %s", len(ids), env.tuning)
    return env.tuning


__all__ = ["PAPER_WEIGHTS", "WEIGHT_GRID", "best_action_subset", "best_by_reward", "pairwise_concordance",
           "reward_agreement", "tune_env", "tune_weights", "weight_grid"]
