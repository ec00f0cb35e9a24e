"""Best-first expansion over typed edges with per-type weights, hop decay, a gain threshold and a token budget.

From the seeds, the frontier node with the highest gain is taken next (a heap), where reaching ``v`` over an
edge of kind ``τ`` at hop ``t`` is worth

    gain(v) = s(q, v) · γ^t · w(τ)          (seeds: gain = s(q, v), t = 0)

A node is reached at most ``max_hops`` edges from its seed (the hop limit h of HugRAG's Algorithm 1: a node taken
at hop h does not open its neighbours). The walk stops when the best frontier gain falls below ``min_gain`` (every
other one is lower), when the token budget is spent, or after ``max_nodes`` nodes; a walk whose frontier ran out
while the hop limit held back a neighbour worth at least ``min_gain`` stopped on the ``hop limit``, not on the gain; a node whose text does not fit what is left of ``token_budget`` is
skipped (counted in ``skipped_budget``) and the walk goes on with the next best one that fits. The graph is a CSR of node ids
with an edge kind per arc; node scores are one query's row of the batched score matrix.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import torch

from hyperrag.graph.utils import ptr_from_sorted_rows, sort_edges, with_reverse


class EdgeKind(IntEnum):
    STRUCTURAL = 0  # entity – entity (relation, synonym)
    HIERARCHY = 1  # entity – module, module – parent module
    GATE = 2  # module – module, verified by the LLM (causal gates)


DEFAULT_KIND_WEIGHTS = {"structural": 0.8, "hierarchy": 1.0, "gate": 1.2}


def kind_weight_vector(weights: dict[str, float] | None = None) -> np.ndarray:
    """``{structural, hierarchy, gate}`` → float64 array indexed by :class:`EdgeKind` (missing → defaults)."""
    merged = {**DEFAULT_KIND_WEIGHTS, **{k.lower(): float(v) for k, v in (weights or {}).items()}}
    unknown = set(merged) - {k.name.lower() for k in EdgeKind}
    if unknown:
        raise ValueError(f"unknown edge kinds {sorted(unknown)}; known: {[k.name.lower() for k in EdgeKind]}")
    return np.array([merged[k.name.lower()] for k in EdgeKind], dtype=np.float64)


@dataclass
class TypedGraph:
    """Symmetric CSR over ``num_nodes`` nodes: ``idx[ptr[v]:ptr[v+1]]`` neighbours of v, ``kind`` per arc."""

    ptr: np.ndarray
    idx: np.ndarray
    kind: np.ndarray
    num_nodes: int

    @classmethod
    def from_edges(cls, edge_index: torch.Tensor, kind: torch.Tensor, num_nodes: int) -> TypedGraph:
        """Args:
            edge_index: LongTensor [2, M], undirected edges (each once; both arcs are stored).
            kind: integer tensor [M] of :class:`EdgeKind`.
        """
        arcs, knd = with_reverse(edge_index.long(), kind.to(torch.int8))  # both arcs, parallel ones kept apart
        keep = arcs[0] != arcs[1]
        # stable: parallel arcs of different kinds keep their given order (the walk's tie-break)
        arcs, knd = sort_edges(arcs[:, keep], knd[keep], num_nodes=num_nodes, stable=True)
        ptr = ptr_from_sorted_rows(arcs[0], num_nodes)
        return cls(ptr.numpy(), arcs[1].numpy(), knd.numpy(), num_nodes)

    def count_by_kind(self) -> dict[str, int]:
        counts = np.bincount(self.kind.astype(np.int64), minlength=len(EdgeKind)) // 2
        return {k.name.lower(): int(counts[k]) for k in EdgeKind}


@dataclass
class Expansion:
    """One query's walk, in the order nodes were taken.

    Attributes:
        nodes / gain / hop / via / parent: per taken node: id, gain, hops from its seed, edge kind it was
            reached over (-1 for seeds), the node it was reached from (-1 for seeds).
        tokens: budget spent.
        stop: ``gain`` (threshold), ``budget``, ``max_nodes``, ``hop limit`` (the frontier ran out while the hop
            limit held back a neighbour at or above the threshold: without the limit the walk would have gone on)
            or ``exhausted``.
        skipped_budget: nodes left out because their text did not fit the budget left.
        hop_limited: taken nodes at the hop limit, whose neighbours were not opened.
        hop_blocked: neighbours the hop limit held back whose gain would have reached ``min_gain`` and that the walk
            never took by another route (counted when the frontier runs out).
    """

    nodes: list[int] = field(default_factory=list)
    gain: list[float] = field(default_factory=list)
    hop: list[int] = field(default_factory=list)
    via: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    tokens: int = 0
    stop: str = "exhausted"
    skipped_budget: int = 0
    hop_limited: int = 0
    hop_blocked: int = 0

    @property
    def gate_crossings(self) -> int:
        """Nodes the walk reached over a causal gate."""
        return sum(1 for k in self.via if k == int(EdgeKind.GATE))

    def gated(self) -> list[bool]:
        """Per taken node: whether its parent chain back to its seed crosses a causal gate (the node was reached
        only through one, in this walk)."""
        pos = {v: i for i, v in enumerate(self.nodes)}
        out: list[bool] = []
        for via, parent in zip(self.via, self.parent):  # a parent is always taken before its child
            out.append(via == int(EdgeKind.GATE) or (parent >= 0 and out[pos[parent]]))
        return out


def best_first_expand(graph: TypedGraph, score: np.ndarray, seeds: list[int], *, gamma: float = 0.8,
                      kind_weight: np.ndarray | None = None, min_gain: float = 0.0,
                      token_budget: float = float("inf"), node_tokens: np.ndarray | None = None,
                      max_nodes: int | None = None, max_hops: int | None = None) -> Expansion:
    """Args:
        graph: typed CSR graph.
        score: float array [N], s(q, v) for every node.
        seeds: starting nodes (gain = their score).
        gamma: hop decay γ.
        kind_weight: float array indexed by :class:`EdgeKind` (default 0.8 / 1.0 / 1.2).
        min_gain: stop when the best frontier gain is below this.
        token_budget: the taken nodes' texts never exceed this many tokens (what does not fit is skipped).
        node_tokens: int array [N], token cost of each node (default 1 each).
        max_nodes: stop after this many nodes.
        max_hops: hop limit h: nodes are taken at most this many edges from their seed (``None``: no limit).
    """
    weights = kind_weight_vector() if kind_weight is None else np.asarray(kind_weight, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    cost = np.ones(graph.num_nodes) if node_tokens is None else np.asarray(node_tokens, dtype=np.float64)
    best = np.full(graph.num_nodes, -np.inf)
    taken = np.zeros(graph.num_nodes, dtype=bool)
    heap: list[tuple[float, int, int, int, int]] = []
    for v in dict.fromkeys(int(s) for s in seeds):  # unique, in order
        best[v] = score[v]
        heapq.heappush(heap, (-score[v], v, 0, -1, -1))
    out = Expansion()
    cheapest = float(cost.min()) if cost.size else 0.0
    pruned = False  # some neighbour was left out for being under the threshold
    held: set[int] = set()  # neighbours worth taking that the hop limit held back
    ptr, idx, kind = graph.ptr, graph.idx, graph.kind
    while heap:
        neg, v, hop, via, parent = heapq.heappop(heap)
        if taken[v]:
            continue
        gain = -neg
        if gain < min_gain:
            out.stop = "gain"
            break
        if out.tokens + cost[v] > token_budget:
            out.skipped_budget += 1
            if token_budget - out.tokens < cheapest:
                out.stop = "budget"
                break
            continue
        taken[v] = True
        out.tokens += int(cost[v])
        out.nodes.append(v)
        out.gain.append(float(gain))
        out.hop.append(hop)
        out.via.append(via)
        out.parent.append(parent)
        if max_nodes is not None and len(out.nodes) >= max_nodes:
            out.stop = "max_nodes"
            break
        nbr = idx[ptr[v]: ptr[v + 1]]
        if nbr.size == 0:
            continue
        knd = kind[ptr[v]: ptr[v + 1]]
        g = score[nbr] * (gamma ** (hop + 1)) * weights[knd]
        if max_hops is not None and hop >= max_hops:  # the hop limit: v's neighbours are h + 1 hops out
            out.hop_limited += 1
            held.update(nbr[(g >= min_gain) & ~taken[nbr]].tolist())
            continue
        fresh = ~taken[nbr]
        above = g >= min_gain
        pruned |= bool((fresh & ~above).any())
        ok = (g > best[nbr]) & above & fresh
        for u, gu, ku in zip(nbr[ok].tolist(), g[ok].tolist(), knd[ok].tolist()):
            if gu > best[u]:  # an earlier arc in this same row may already have raised it
                best[u] = gu
                heapq.heappush(heap, (-gu, u, hop + 1, ku, v))
    else:
        out.hop_blocked = int(sum(not taken[u] for u in held))
        if out.skipped_budget:
            out.stop = "budget"
        elif out.hop_blocked:  # the limit held back a node worth taking: the walk ended on the hop limit
            out.stop = "hop limit"
        elif pruned:
            out.stop = "gain"
    return out
