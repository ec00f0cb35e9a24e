"""Retrieval metrics: recall@k and full-chain retrieval (FCR@k)."""

from __future__ import annotations

from collections.abc import Sequence


def recall_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of the gold passages found in the top ``k``."""
    if not gold:
        raise ValueError("recall needs at least one gold passage")
    top = set(ranked[:k])
    return sum(g in top for g in set(gold)) / len(set(gold))


def full_chain_at_k(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """1.0 when every gold passage is in the top ``k`` (the whole reasoning chain was retrieved), else 0.0."""
    if not gold:
        raise ValueError("full-chain retrieval needs at least one gold passage")
    return float(set(gold) <= set(ranked[:k]))


def retrieval_metrics(rankings: Sequence[Sequence[str]], golds: Sequence[Sequence[str]],
                      ks: Sequence[int] = (2, 5, 10)) -> dict[str, float]:
    """Mean recall@k and fcr@k in percent over the queries that have gold passages.

    Args:
        rankings: per query, passage ids best first.
        golds: per query, gold passage ids (queries without gold are skipped).
    """
    pairs = [(r, g) for r, g in zip(rankings, golds) if g]
    out: dict[str, float] = {"queries_with_gold": float(len(pairs))}
    if not pairs:
        return out
    for k in ks:
        out[f"recall@{k}"] = 100.0 * sum(recall_at_k(r, g, k) for r, g in pairs) / len(pairs)
    for k in ks:
        out[f"fcr@{k}"] = 100.0 * sum(full_chain_at_k(r, g, k) for r, g in pairs) / len(pairs)
    return out
