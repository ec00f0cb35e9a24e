"""Edge lists to embed: a synthetic tree closure (benchmarks, tests) and a passage graph from OpenIE.

Both return a LongTensor [2, E] of relations ``u → v``. The passage graph is the stand-in until HyperRAG's
keyword / query-guided / tree-fused passage graphs replace it: passages are linked when their OpenIE
entities share a canonical name.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import torch

from hyperrag.data.openie import OpenIERecords
from hyperrag.graph.canonical import canonical_name
from hyperrag.graph.utils import undirected_edges, with_reverse


def tree_size(branching: int, depth: int) -> int:
    """Nodes of a complete tree with the given branching factor and depth (root at depth 0)."""
    return depth + 1 if branching == 1 else (branching ** (depth + 1) - 1) // (branching - 1)


def tree_depths(branching: int, depth: int) -> torch.Tensor:
    """LongTensor [N]: depth of each node of the complete tree (nodes numbered breadth-first)."""
    return torch.cat([torch.full((branching ** d,), d, dtype=torch.long) for d in range(depth + 1)])


def tree_closure(branching: int, depth: int) -> torch.Tensor:
    """Transitive closure of a complete tree: every (descendant → ancestor) pair.

    Nodes are numbered breadth-first (root 0; the parent of ``i`` is ``(i - 1) // branching``). The
    branching-4, depth-6 tree has 5,461 nodes and 30,948 closure relations (Nickel & Kiela's and gensim's
    hyponym → hypernym direction).

    Returns:
        LongTensor [2, E], rows (descendant, ancestor), sorted by descendant then distance.
    """
    n = tree_size(branching, depth)
    nodes = torch.arange(1, n)
    cur = nodes
    src, dst = [], []
    while nodes.numel():
        cur = (cur - 1) // branching  # one level up
        src.append(nodes)
        dst.append(cur)
        below_root = cur > 0
        nodes, cur = nodes[below_root], cur[below_root]
    s, d = torch.cat(src), torch.cat(dst)
    order = torch.argsort(s * n + (n - d), stable=True)
    return torch.stack([s[order], d[order]])


def tree_edges(branching: int, depth: int) -> torch.Tensor:
    """The tree itself (child → parent), LongTensor [2, N - 1]."""
    child = torch.arange(1, tree_size(branching, depth))
    return torch.stack([child, (child - 1) // branching])


def passage_entity_sets(openie: OpenIERecords) -> list[set[str]]:
    """Per passage, the canonical names of its OpenIE entities and triple subjects/objects."""
    out = []
    for ents, triples in zip(openie.entities, openie.triples):
        names = {canonical_name(e) for e in ents}
        names.update(canonical_name(x) for t in triples for x in (t[0], t[2]))
        names.discard("")
        out.append(names)
    return out


def shared_entity_edges(openie: OpenIERecords, max_entity_passages: int = 20, max_neighbors: int = 10,
                        min_weight: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Passage graph: passages linked when they mention an entity with the same canonical name.

    Built through an inverted index (entity → passages), never all pairs. A pair's weight is the sum of the
    shared entities' idf ``log(N / df)``; entities in more than ``max_entity_passages`` passages ("united
    states") are ignored; each passage keeps its ``max_neighbors`` heaviest links; the union is symmetric.

    Returns:
        ``(edges, weight)``: LongTensor [2, E] holding both directions of every link, FloatTensor [E].
    """
    sets = passage_entity_sets(openie)
    n = len(sets)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, names in enumerate(sets):
        for name in names:
            postings[name].append(i)
    pair_weight: Counter[tuple[int, int]] = Counter()
    for plist in postings.values():
        df = len(plist)
        if df < 2 or df > max_entity_passages:
            continue
        idf = math.log(n / df)
        for a in range(df):
            for b in range(a + 1, df):
                pair_weight[(plist[a], plist[b])] += idf
    neighbors: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for (a, b), w in pair_weight.items():
        if w > min_weight:
            neighbors[a].append((w, b))
            neighbors[b].append((w, a))
    src: list[int] = []
    dst: list[int] = []
    wts: list[float] = []
    for a, lst in neighbors.items():
        lst.sort(key=lambda t: (-t[0], t[1]))
        for w, b in lst[:max_neighbors]:
            src.append(a)
            dst.append(b)
            wts.append(w)
    if not src:
        return torch.empty(2, 0, dtype=torch.long), torch.empty(0)
    # the union: a link kept by either end once (u < v; both ends give it the same weight), then both directions
    pairs, weights = undirected_edges(torch.tensor([src, dst], dtype=torch.long),
                                      torch.tensor(wts, dtype=torch.float64), n, reduce="max")
    return with_reverse(pairs, weights.float())
