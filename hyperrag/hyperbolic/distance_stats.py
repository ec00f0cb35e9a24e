"""HyperRAG's Table 3: distances from questions to their nearest passages, hyperbolic vs Euclidean.

For each sampled question and each ``k`` (1, 3, 10), the ``k`` nearest passages in each space — the trained
Poincaré ball (the projected question against the passages' trained points) and the sentence-embedding space
(Euclidean distance of the unit-norm embeddings) — and the max / min / mean of those distances over all sampled
questions. The paper reads the larger, right-skewed hyperbolic range as better separation of near and far
passages; :func:`distance_table` adds each space's skewness of *all* question–passage distances and the gap
between the 1st and the 10th neighbour, relative to the spread, which is what that claim is about.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from hyperrag.hyperbolic.distance import poincare_distance


def _skew(x: torch.Tensor) -> float:
    x = x.double().flatten()
    s = x.std()
    return float(((x - x.mean()) ** 3).mean() / s ** 3) if s > 0 else 0.0


@torch.no_grad()
def distance_table(query_points: torch.Tensor, passage_points: torch.Tensor, query_emb: torch.Tensor,
                   passage_emb: torch.Tensor, curvature: float = 1.0, ks: Sequence[int] = (1, 3, 10)
                   ) -> dict[str, dict[str, dict[str, float]]]:
    """Table 3 of the paper for a sample of questions.

    Args:
        query_points: [Q, D] the questions in the ball (projected).
        passage_points: [P, D] the passages in the ball (trained).
        query_emb / passage_emb: [Q, E] / [P, E] the sentence embeddings (unit norm).
        curvature: the ball's ``c``.
        ks: neighbour counts (rows).

    Returns:
        ``{"hyperbolic" | "euclidean": {"top-k": {"max", "min", "mean"}, ..., "all": {"mean", "std",
        "skewness", "gap_1_10"}}}`` — ``gap_1_10``: mean (10th − 1st neighbour distance) / std of all distances.
    """
    q_h, p_h = query_points.double(), passage_points.double()
    d_h = poincare_distance(q_h.unsqueeze(1), p_h.unsqueeze(0), curvature)  # [Q, P]
    d_e = torch.cdist(query_emb.double(), passage_emb.double())  # [Q, P]
    out: dict[str, dict[str, dict[str, float]]] = {}
    kmax = min(max(ks), d_h.shape[1])
    for name, d in (("hyperbolic", d_h), ("euclidean", d_e)):
        near = torch.topk(d, kmax, dim=1, largest=False).values  # [Q, kmax], nearest first
        rows = {f"top-{k}": {"max": float(near[:, :k].max()), "min": float(near[:, :k].min()),
                             "mean": float(near[:, :k].mean())} for k in ks if k <= kmax}
        rows["all"] = {"mean": float(d.mean()), "std": float(d.std()), "skewness": _skew(d),
                       "gap_1_10": float((near[:, kmax - 1] - near[:, 0]).mean() / d.std().clamp_min(1e-12))}
        out[name] = rows
    return out


def markdown(table: dict[str, dict[str, dict[str, float]]], title: str) -> str:
    """The table as the paper lays it out, plus the distribution row."""
    ks = [k for k in table["hyperbolic"] if k.startswith("top-")]
    lines = [f"# {title}", "", "| metric | hyperbolic max | min | mean | Euclidean max | min | mean |",
             "|---|---|---|---|---|---|---|"]
    for k in ks:
        h, e = table["hyperbolic"][k], table["euclidean"][k]
        lines.append(f"| {k.capitalize()} | {h['max']:.2f} | {h['min']:.2f} | {h['mean']:.2f} | {e['max']:.2f} | "
                     f"{e['min']:.2f} | {e['mean']:.2f} |")
    lines += ["", "| all question–passage distances | mean | std | skewness | (10th − 1st neighbour) / std |",
              "|---|---|---|---|---|"]
    for name in ("hyperbolic", "euclidean"):
        a = table[name]["all"]
        lines.append(f"| {name} | {a['mean']:.3f} | {a['std']:.3f} | {a['skewness']:.3f} | {a['gap_1_10']:.3f} |")
    return "\n".join(lines) + "\n"
