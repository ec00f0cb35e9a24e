"""Approximate top-k cosine neighbours of every row (a kNN graph): an inverted-file (IVF) search done as block
matrix products, then neighbour-of-neighbour refinement.

Same contract as :func:`hyperrag.ops.knn.topk_cosine_neighbors` — ``(src, dst, sim)`` with ``src`` ascending,
``threshold`` and ``exclude_self`` honoured — at a cost linear in N instead of N². The rows are split into about
N / ``list_size`` cells by spherical k-means (FAISS's ``Kmeans``, trained on a sample); every row lives in its
nearest cell, and every row is compared, exactly, with the members of the ``nprobe`` cells nearest to it — the
IVF-Flat search (FAISS's ``IndexIVFFlat`` with that ``nprobe`` looks at the same candidates). ``refine_rounds``
rounds of :func:`refine_neighbors` then compare each row with its neighbours' neighbours, which finds most of what
sat in cells it did not probe. What is approximate is only which rows are looked at; every returned similarity is
an exact float32 dot product.

Why not ``IndexIVFFlat.search`` itself: it scans the probed cells query by query, a memory-bound dot product per
candidate (1.47 ms per query at nprobe 32 over 200,000 × 384 rows on two AVX2 cores, about 4 GFLOP/s), while
here all the rows that probe a cell are scored against it in one matrix product (a cell's shape, [8192, 384] ×
[384, 256], ran at 61 GFLOP/s on the same cores). FAISS's IVF-SQ8 with exact re-ranking (``IndexRefineFlat``) scanned 2.2× faster than IVF-Flat, still far
from the matrix products; HNSW was not measured (its build inserts the rows one by one). Measurements:
BENCHMARKS.md, "Synonym kNN at 10^6 (issue 21)". Because the products are torch's, the search runs on ``x``'s
device: on CUDA the same join runs on the GPU (only the k-means sample is trained on the CPU), so no FAISS GPU build
is needed.

FAISS is imported lazily (``pip install faiss-cpu``).
"""

from __future__ import annotations

import numpy as np
import torch
from tqdm.auto import tqdm

from hyperrag.ops.knn import topk_cosine_neighbors

#: k-means iterations that train the cells (FAISS's default is 25; at 10 the cells differ little in recall and
#: training is the largest fixed cost at N = 10^6 on two cores).
TRAIN_ITERATIONS = 10
#: training rows per cell (FAISS warns below 39; more rows barely move the centroids).
TRAIN_ROWS_PER_LIST = 40
#: refinement: the first this many neighbours of the first this many neighbours are each row's candidates.
REFINE_FANOUT = 10
#: elements of one temporary (scores of query rows × cell members, gathered rows, ...): 16 MiB. Small on purpose:
#: glibc hands blocks over 32 MiB to mmap and back on every free, and in a VM the page faults of touching fresh
#: memory cost more than the products (measured: a 570 MB gather 5.0 s into fresh memory, 0.8 s into reused).
MAX_BLOCK_ELEMENTS = 1 << 22


def train_cells(x: torch.Tensor, num_cells: int, seed: int = 0) -> torch.Tensor:
    """Spherical k-means centroids of a sample of ``x``'s rows.

    Args:
        x: FloatTensor [N, D], L2-normalised rows.
        num_cells: centroids wanted (C).
        seed: seed of the sample and of k-means.

    Returns:
        FloatTensor [C, D] (unit rows) on ``x``'s device.
    """
    import faiss

    n, dim = x.shape
    rows = min(n, num_cells * TRAIN_ROWS_PER_LIST)
    pick = torch.from_numpy(np.sort(np.random.default_rng(seed).choice(n, rows, replace=False)))
    sample = x[pick.to(x.device)].detach().to("cpu", torch.float32).contiguous().numpy()
    faiss.omp_set_num_threads(torch.get_num_threads())  # the thread budget the caller gave torch
    kmeans = faiss.Kmeans(dim, num_cells, niter=TRAIN_ITERATIONS, spherical=True, seed=seed,
                          max_points_per_centroid=TRAIN_ROWS_PER_LIST, verbose=False)
    kmeans.train(sample)
    return torch.from_numpy(kmeans.centroids).to(x.device, x.dtype)


def nearest_cells(x: torch.Tensor, centroids: torch.Tensor, nprobe: int) -> torch.Tensor:
    """LongTensor [N, nprobe]: each row's ``nprobe`` most similar centroids, best first (blockwise)."""
    rows = max(1, MAX_BLOCK_ELEMENTS // max(centroids.shape[0], x.shape[1]))
    return torch.cat([torch.topk(x[s:s + rows] @ centroids.T, nprobe, dim=1).indices for s in range(0, len(x), rows)])


def refine_neighbors(x: torch.Tensor, best_sim: torch.Tensor, best_idx: torch.Tensor,
                     rounds: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Neighbours of neighbours (one NN-descent step per round): every row is compared, exactly, with the first
    ``REFINE_FANOUT`` neighbours of each of its first ``REFINE_FANOUT`` neighbours, and keeps the best.

    A true neighbour that sits in a cell the row did not probe is usually a neighbour of one of its neighbours,
    so each round recovers much of what the cells missed, for ``REFINE_FANOUT²`` dot products per row.

    Args:
        x: FloatTensor [N, D], L2-normalised rows.
        best_sim: FloatTensor [N, K], each row's similarities so far, best first (``-inf``: none).
        best_idx: LongTensor [N, K], the neighbours they belong to (``-1``: none).
        rounds: how many rounds (each reads the previous round's graph).

    Returns:
        ``(best_sim, best_idx)``, the same shapes, best first.
    """
    n, width = best_idx.shape
    fan = min(REFINE_FANOUT, width)
    step = max(1, MAX_BLOCK_ELEMENTS // ((width + fan * fan) * x.shape[1]))
    for _ in range(rounds):
        new_sim, new_idx = torch.empty_like(best_sim), torch.empty_like(best_idx)
        for s in range(0, n, step):
            own = best_idx[s:s + step]  # [b, K]
            b = own.shape[0]
            first = own[:, :fan].clamp(min=0)
            hop = torch.index_select(best_idx[:, :fan], 0, first.reshape(-1)).reshape(b, fan * fan)  # [b, fan²]
            hop = hop.masked_fill((own[:, :fan] < 0).repeat_interleave(fan, dim=1), -1)
            cand = torch.sort(torch.cat([own, hop], 1), dim=1).values  # [b, C]
            repeat = torch.nn.functional.pad(cand[:, 1:] == cand[:, :-1], (1, 0))
            cand = cand.masked_fill(repeat, -1)  # each candidate once
            # masked_fill / index_select: boolean index_put and fancy indexing are several times slower on the CPU
            rows = torch.index_select(x, 0, cand.clamp(min=0).reshape(-1)).reshape(b, cand.shape[1], -1)
            sim = torch.bmm(rows, x[s:s + step].unsqueeze(2)).squeeze(2)  # [b, C]
            sim = sim.masked_fill(cand < 0, float("-inf"))
            top_sim, top_pos = torch.topk(sim, width, dim=1)
            top_idx = torch.gather(cand, 1, top_pos).masked_fill(top_sim == float("-inf"), -1)
            new_sim[s:s + step], new_idx[s:s + step] = top_sim, top_idx
        best_sim, best_idx = new_sim, new_idx
    return best_sim, best_idx


def _ptr(cells: torch.Tensor, num_cells: int) -> list[int]:
    """Offsets [C + 1] of each cell's run in ``cells`` sorted ascending."""
    return [0, *torch.cumsum(torch.bincount(cells, minlength=num_cells), 0).tolist()]


def approximate_topk_cosine_neighbors(
    x: torch.Tensor,
    k: int,
    threshold: float = 0.0,
    exclude_self: bool = True,
    *,
    list_size: int,
    nprobe: int,
    refine_rounds: int = 0,
    seed: int = 0,
    show_progress: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For every row of ``x``, (approximately) its ``k`` most similar rows with similarity ``>= threshold``.

    Args:
        x: FloatTensor [N, D], L2-normalised rows (so dot product = cosine). Any device.
        k: neighbours kept per row (before thresholding).
        threshold: minimum similarity of a returned pair.
        exclude_self: drop the pair (i, i).
        list_size: rows per cell on average (``C = round(N / list_size)`` cells; one cell, or ``nprobe >= C``,
            is the exact search).
        nprobe: cells each row is compared with (more: higher recall, proportionally slower).
        refine_rounds: rounds of :func:`refine_neighbors` after the cell search (0: none).
        seed: seed of the k-means sample and of k-means.
        show_progress: progress bar over the cells.

    Returns:
        ``(src, dst, sim)``: LongTensor [M], LongTensor [M], FloatTensor [M] on ``x``'s device, one entry per
        kept (row, neighbour) pair, src ascending, each row's neighbours by decreasing similarity.
    """
    n = x.shape[0]
    num_cells = max(1, round(n / list_size))
    if num_cells == 1 or nprobe >= num_cells or k <= 0:  # every cell probed: the exact search, done exactly
        return topk_cosine_neighbors(x, max(k, 0), threshold, exclude_self=exclude_self, show_progress=show_progress)
    device = x.device
    kk = min(k + int(exclude_self), n)  # self is dropped at the end, wherever it ranks
    probes = nearest_cells(x, train_cells(x, num_cells, seed), nprobe)  # [N, p]
    # keys: each row in its nearest cell; queries: each row in every cell it probes — both grouped by cell
    members = torch.sort(probes[:, 0], stable=True)
    member_ptr = _ptr(members.values, num_cells)
    visits = torch.sort(probes.reshape(-1), stable=True)
    visitors = visits.indices // nprobe  # the row of each (row, probed cell) pair
    visit_ptr = _ptr(visits.values, num_cells)
    del probes, visits

    best_sim = torch.full((n, kk), float("-inf"), dtype=x.dtype, device=device)
    best_idx = torch.full((n, kk), -1, dtype=torch.long, device=device)
    for c in tqdm(range(num_cells), desc="ann", disable=not show_progress, leave=False):
        keys = members.indices[member_ptr[c]:member_ptr[c + 1]]
        if keys.numel() == 0:
            continue
        key_rows = x[keys]  # [m, D]
        queries = visitors[visit_ptr[c]:visit_ptr[c + 1]]
        step = max(1, MAX_BLOCK_ELEMENTS // max(keys.numel(), x.shape[1]))
        for s in range(0, queries.numel(), step):
            q = queries[s:s + step]
            sim, pos = torch.topk(x[q] @ key_rows.T, min(kk, keys.numel()), dim=1)  # this cell's best, [b, <=kk]
            # merge with what the row's other cells gave (each row visits a cell once: no duplicates)
            merged_sim = torch.cat([best_sim[q], sim], 1)
            merged_idx = torch.cat([best_idx[q], keys[pos]], 1)
            top_sim, top_pos = torch.topk(merged_sim, kk, dim=1)
            best_sim[q] = top_sim
            best_idx[q] = torch.gather(merged_idx, 1, top_pos)

    if refine_rounds:
        best_sim, best_idx = refine_neighbors(x, best_sim, best_idx, refine_rounds)
    row = torch.arange(n, device=device).unsqueeze(1).expand_as(best_idx)
    valid = best_idx >= 0
    if exclude_self:
        valid &= best_idx != row
    keep = valid & (valid.cumsum(1) <= k) & (best_sim >= threshold)  # the first k valid, thresholded
    return row[keep], best_idx[keep], best_sim[keep]
