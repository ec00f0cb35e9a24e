"""Graph bookkeeping the framework needs everywhere, done by PyG's utilities (``torch_geometric.utils``).

One place for the small operations every graph builder repeats: one undirected edge per node pair, parallel
edges merged, CSR pointers from sorted rows or row lengths, the row of every CSR entry. Each function is a thin
wrapper that fixes the framework's conventions (``u < v`` storage of undirected edges, self loops dropped,
``int64`` indices, CPU or GPU alike) on top of PyG's ``coalesce`` / ``to_undirected`` / ``remove_self_loops`` /
``sort_edge_index`` / ``cumsum`` / ``index2ptr`` / ``ptr2index``. ``torch_geometric`` is imported on first use
(it pulls in ``torch._dynamo``: about two seconds of CPU), so modules that never build a graph never pay for it.

Personalized PageRank keeps its own benchmarked CSR kernel (:mod:`hyperrag.ops.ppr`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch

Reduce = Literal["sum", "max"]


def _reduce_name(reduce: str) -> str:
    """PyG's name of a reduction (``amax`` as ``torch.scatter_reduce`` spells it is PyG's ``max``)."""
    return {"amax": "max", "add": "sum"}.get(reduce, reduce)


def coalesce_edges(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int,
                   reduce: str = "sum") -> tuple[torch.Tensor, torch.Tensor]:
    """One edge per ordered pair, sorted by ``(row, col)``; parallel weights summed or max-ed.

    Args:
        edge_index: LongTensor [2, M].
        edge_weight: Tensor [M].
        num_nodes: N (every index below it).
        reduce: ``sum`` | ``max`` (``amax`` accepted).

    Returns:
        ``(edge_index [2, M'], edge_weight [M'])``.
    """
    from torch_geometric.utils import coalesce

    if edge_index.shape[1] == 0:
        return edge_index.reshape(2, 0), edge_weight.reshape(0)
    return coalesce(edge_index, edge_weight, num_nodes=num_nodes, reduce=_reduce_name(reduce))


def undirected_edges(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int,
                     reduce: str = "sum") -> tuple[torch.Tensor, torch.Tensor]:
    """One edge per unordered pair, stored as ``u < v`` and sorted by ``(u, v)``; self loops dropped; the
    weights of all edges joining the same two nodes (either direction) summed or max-ed.

    Args:
        edge_index: LongTensor [2, M], any direction.
        edge_weight: Tensor [M].
        num_nodes: N.
        reduce: ``sum`` | ``max`` (``amax`` accepted).

    Returns:
        ``(edge_index [2, M'], edge_weight [M'])`` with ``edge_index[0] < edge_index[1]``.
    """
    from torch_geometric.utils import remove_self_loops

    edge_index, edge_weight = remove_self_loops(edge_index, edge_weight)
    # each pair in its u < v orientation, then PyG's coalesce merges the copies (half the work of coalescing
    # ``to_undirected``'s both directions and keeping the upper half: the same result)
    upper = torch.stack([edge_index.min(0).values, edge_index.max(0).values]) if edge_index.numel() else edge_index
    return coalesce_edges(upper, edge_weight, num_nodes, reduce)


def both_directions(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int,
                    reduce: str = "sum") -> tuple[torch.Tensor, torch.Tensor]:
    """Every edge in both directions, coalesced (``to_undirected``): LongTensor [2, M'] sorted by ``(row, col)``
    and its weights [M']."""
    from torch_geometric.utils import to_undirected

    if edge_index.shape[1] == 0:
        return edge_index.reshape(2, 0), edge_weight.reshape(0)
    return to_undirected(edge_index, edge_weight, num_nodes=num_nodes, reduce=_reduce_name(reduce))


def sort_edges(edge_index: torch.Tensor, *attrs: torch.Tensor, num_nodes: int,
               stable: bool = False) -> tuple[torch.Tensor, ...]:
    """Edges sorted by ``(row, col)`` (``sort_edge_index``), with their attribute tensors permuted alike.

    Args:
        edge_index: LongTensor [2, M]; attrs: tensors [M, ...].
        num_nodes: N.
        stable: keep parallel edges (same ``(row, col)``) in their given order — PyG's ``sort_edge_index``
            does not promise that, so a stable ``index_sort`` of the same key is used.

    Returns:
        ``(edge_index [2, M], *attrs)``.
    """
    from torch_geometric.utils import index_sort, sort_edge_index

    if edge_index.shape[1] == 0:
        return (edge_index.reshape(2, 0), *attrs)
    if stable:
        _, perm = index_sort(edge_index[0] * num_nodes + edge_index[1], max_value=num_nodes * num_nodes,
                             stable=True)
        return (edge_index[:, perm], *(a[perm] for a in attrs))
    out = sort_edge_index(edge_index, list(attrs), num_nodes=num_nodes)
    return (out[0], *out[1])


def distinct_edges(edge_index: torch.Tensor, num_nodes: int, both_ways: bool = False) -> torch.Tensor:
    """Distinct directed edges sorted by ``(row, col)``, self loops kept (PyG's ``coalesce`` without weights;
    ``to_undirected`` when ``both_ways``: each edge and its reverse). Also for the pairs of a bipartite relation
    (``num_nodes`` = the larger side), whose "self loops" are pairs like any other.

    Args:
        edge_index: LongTensor [2, M].
        num_nodes: N (every index below it).
        both_ways: add the reverse of every edge first.

    Returns:
        LongTensor [2, M'].
    """
    from torch_geometric.utils import coalesce, to_undirected

    edge_index = edge_index.long()
    if edge_index.shape[1] == 0:
        return edge_index.reshape(2, 0)
    if both_ways:
        return to_undirected(edge_index, num_nodes=num_nodes)
    return coalesce(edge_index, num_nodes=num_nodes)


def with_reverse(edge_index: torch.Tensor, *attrs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Every edge, then every edge reversed (``[e, e.flip(0)]``), attributes repeated alike — nothing merged,
    nothing reordered: arcs that must stay apart (parallel edges of different kinds, relations repeated as a loss
    weight). To merge the two directions use :func:`both_directions` or :func:`distinct_edges`.

    Args:
        edge_index: LongTensor [2, M]; attrs: tensors [M, ...].

    Returns:
        ``(edge_index [2, 2M], *attrs [2M, ...])``.
    """
    return (torch.cat([edge_index, edge_index.flip(0)], dim=1), *(torch.cat([a, a]) for a in attrs))


def unique_edges(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Distinct directed edges, self loops dropped, sorted by ``(row, col)`` (PyG's ``coalesce`` without
    weights): LongTensor [2, M'] from LongTensor [2, M]."""
    from torch_geometric.utils import coalesce, remove_self_loops

    edge_index = remove_self_loops(edge_index.long())[0]
    if edge_index.shape[1] == 0:
        return edge_index.reshape(2, 0)
    return coalesce(edge_index, num_nodes=num_nodes)


def sort_typed_edges(edge_index: torch.Tensor, edge_weight: torch.Tensor, edge_type: torch.Tensor,
                     num_nodes: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Typed edges sorted by type, then ``(row, col)`` — the order a full knowledge-graph build stores.

    Args:
        edge_index: LongTensor [2, M]; edge_weight: [M]; edge_type: integer Tensor [M].

    Returns:
        ``(edge_index, edge_weight, edge_type)`` permuted.
    """
    order = torch.arange(edge_index.shape[1], device=edge_index.device)
    edge_index, order = sort_edges(edge_index, order, num_nodes=num_nodes)
    by_type = torch.argsort(edge_type[order], stable=True)  # stable: (row, col) order kept within a type
    order = order[by_type]
    return edge_index[:, by_type], edge_weight[order], edge_type[order]


def ptr_from_counts(counts: torch.Tensor) -> torch.Tensor:
    """CSR pointer [R + 1] from row lengths [R] (PyG's ``cumsum``, which prepends the zero)."""
    from torch_geometric.utils import cumsum

    return cumsum(counts.long())


def ptr_from_sorted_rows(rows: torch.Tensor, num_rows: int) -> torch.Tensor:
    """CSR pointer [R + 1] of a row index sorted ascending (``index2ptr``)."""
    from torch_geometric.utils.sparse import index2ptr

    return index2ptr(rows.long(), num_rows)


def csr_owner(ptr: torch.Tensor) -> torch.Tensor:
    """LongTensor [nnz]: the row of every CSR entry (``ptr2index``)."""
    from torch_geometric.utils.sparse import ptr2index

    return ptr2index(ptr.long())


def csr_from_lists(rows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """CSR ``(ptr [R + 1], idx [nnz])`` of Python row lists, entries in the given order."""
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)
    return ptr_from_counts(lengths), torch.tensor([x for r in rows for x in r], dtype=torch.long)


def csr_from_pairs(rows: torch.Tensor, values: torch.Tensor, num_rows: int,
                   num_values: int) -> tuple[torch.Tensor, torch.Tensor]:
    """CSR ``(ptr [R + 1], idx [nnz])`` of ``(row, value)`` pairs, values ascending within a row.

    Args:
        rows: LongTensor [nnz], below ``num_rows``; values: LongTensor [nnz], below ``num_values``.
    """
    if rows.numel() == 0:
        return torch.zeros(num_rows + 1, dtype=torch.long), values.long().reshape(0)
    pairs = sort_edges(torch.stack([rows.long(), values.long()]), num_nodes=max(num_rows, num_values))[0]
    return ptr_from_sorted_rows(pairs[0], num_rows), pairs[1]


def csr_by_row(rows: torch.Tensor, num_rows: int, *values: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """CSR of entries given with their row: grouped by row, each row's entries in their given order.

    A stable ``index_sort`` of the rows and ``index2ptr``.

    Args:
        rows: LongTensor [nnz], below ``num_rows``.
        num_rows: R.
        values: tensors [nnz, ...] carried along (the CSR's ``idx`` and any per-entry attributes).

    Returns:
        ``(ptr [R + 1], *values permuted)``.
    """
    from torch_geometric.utils import index_sort

    rows = rows.long()
    if rows.numel() == 0:
        return (torch.zeros(num_rows + 1, dtype=torch.long, device=rows.device), *values)
    sorted_rows, perm = index_sort(rows, max_value=num_rows, stable=True)
    return (ptr_from_sorted_rows(sorted_rows, num_rows), *(v[perm] for v in values))


def expand_rows(ptr: torch.Tensor, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Every entry of the CSR rows ``rows`` (repeats allowed), row after row.

    Args:
        ptr: LongTensor [R + 1], a CSR pointer.
        rows: LongTensor [k], rows of that CSR.

    Returns:
        ``(owner [n], pos [n])``: ``owner`` indexes ``rows`` (which request an entry answers), ``pos`` is the
        entry's position in the CSR's ``idx``; ``n`` is the summed length of the rows.
    """
    start = ptr[rows]
    counts = ptr[rows + 1] - start
    out_ptr = ptr_from_counts(counts)
    owner = csr_owner(out_ptr)
    pos = start[owner] + torch.arange(owner.numel(), device=ptr.device) - out_ptr[owner]
    return owner, pos


__all__ = [
    "both_directions",
    "coalesce_edges",
    "csr_by_row",
    "csr_from_lists",
    "csr_from_pairs",
    "csr_owner",
    "distinct_edges",
    "expand_rows",
    "ptr_from_counts",
    "ptr_from_sorted_rows",
    "sort_edges",
    "sort_typed_edges",
    "undirected_edges",
    "unique_edges",
    "with_reverse",
]
