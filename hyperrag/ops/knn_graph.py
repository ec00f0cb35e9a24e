"""Top-k cosine neighbours of every row, exact or approximate by size: the one entry point of the kNN callers.

Synonym edges (:mod:`hyperrag.graph.build`), semantic dedup, hierarchy gate prefiltering and causal alias links
all ask the same question; :func:`cosine_knn_graph` answers it with the exact blockwise operator
(:mod:`hyperrag.ops.knn`, O(N²) work) up to ``exact_max_rows`` rows and the FAISS inverted-file operator
(:mod:`hyperrag.ops.ann`, O(N) work) above — or always one of them when ``backend`` says so. The settings live
in ``hydra_configs/graph/default.yaml`` (``knn:``), which the other callers' configs reference.
"""

from __future__ import annotations

from typing import Literal

import torch

from hyperrag.config.validation import NonNegativeInt, PositiveInt, settings
from hyperrag.ops.ann import approximate_topk_cosine_neighbors
from hyperrag.ops.knn import topk_cosine_neighbors

Backend = Literal["exact", "approximate"]


@settings
class KnnSettings:
    """How top-k cosine neighbours are searched (``graph.knn``; part of the index key where a graph uses it).

    Attributes:
        backend: ``auto`` (exact up to ``exact_max_rows`` rows, approximate above), ``exact`` or ``approximate``.
        exact_max_rows: the largest N that ``auto`` searches exactly.
        ann_list_size: approximate: rows per inverted-file cell on average.
        ann_nprobe: approximate: cells scanned per query.
        ann_refine_rounds: approximate: neighbour-of-neighbour rounds after the cell search.
    """

    backend: Literal["auto", "exact", "approximate"]
    exact_max_rows: PositiveInt
    ann_list_size: PositiveInt
    ann_nprobe: PositiveInt
    ann_refine_rounds: NonNegativeInt


def knn_backend(num_rows: int, knn: KnnSettings | None) -> Backend:
    """The backend that searches ``num_rows`` rows under ``knn`` (``None``: exact)."""
    if knn is None or knn.backend == "exact":
        return "exact"
    if knn.backend == "approximate":
        return "approximate"
    return "exact" if num_rows <= knn.exact_max_rows else "approximate"


def cosine_knn_graph(
    x: torch.Tensor,
    k: int,
    threshold: float = 0.0,
    knn: KnnSettings | None = None,
    exclude_self: bool = True,
    show_progress: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For every row of ``x``, its ``k`` most similar rows with similarity ``>= threshold``, by the backend
    :func:`knn_backend` picks.

    Args:
        x: FloatTensor [N, D], L2-normalised rows. Any device.
        k: neighbours kept per row (before thresholding).
        threshold: minimum similarity of a returned pair.
        knn: the search settings (``graph.knn``); ``None``: exact.
        exclude_self: drop the pair (i, i).
        show_progress: progress bar.

    Returns:
        ``(src, dst, sim)``: LongTensor [M], LongTensor [M], FloatTensor [M] on ``x``'s device, src ascending.
    """
    if knn_backend(x.shape[0], knn) == "exact":
        return topk_cosine_neighbors(x, k, threshold, exclude_self=exclude_self, show_progress=show_progress)
    assert knn is not None
    return approximate_topk_cosine_neighbors(x, k, threshold, exclude_self, list_size=knn.ann_list_size,
                                             nprobe=knn.ann_nprobe, refine_rounds=knn.ann_refine_rounds,
                                             show_progress=show_progress)
