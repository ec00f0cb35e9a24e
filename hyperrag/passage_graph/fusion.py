"""Tree fusion: explicit and implicit trees merged on their shared nodes into one valid forest.

Edges are offered strongest first (ties by input order, so the first graph wins — the explicit one in
:func:`fuse_trees`'s usual call); an edge ``parent → child`` is accepted when

* the child has no parent yet (a forest node has at most one parent; the edge's direction is kept as given,
  never flipped), and
* parent and child lie in different trees (union-find) — otherwise it would close a cycle.

Shared nodes are the same ids in both inputs (passages ``0..P-1``), so a passage linked by keywords and by a
query ends up in one tree. The result is a forest: every tree has exactly one root, no node has two parents,
no cycles (directed or undirected).

**Merged nodes** (``group``, §3.1.3: nodes "that contain the same key entity ... are unified into a single node"):
passages of one group are one node of the tree — an edge inside a group is not a tree edge (counted as
``merged_inside``), and the one-parent and no-cycle rules hold between groups. In the ball a merged node is its
members tied together (:attr:`Forest.merged`: ``member → representative`` pairs, trained like edges).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from hyperrag.passage_graph.edges import EdgeSet
from hyperrag.utils.union_find import UnionFind


@dataclass
class Forest:
    """A directed forest over ``num_nodes`` nodes.

    Attributes:
        edges: the accepted :class:`EdgeSet` (parent → child).
        parent: LongTensor [N], the parent of each node or -1 for a root.
        dropped_cycle: offered edges rejected because they would close a cycle.
        dropped_second_parent: offered edges rejected because the child (its merged node) already had a parent.
        merged: ``member → representative`` ties of the merged nodes (empty without merging).
        merged_inside: offered edges between two members of one merged node (not tree edges).
    """

    edges: EdgeSet
    parent: torch.Tensor
    dropped_cycle: int = 0
    dropped_second_parent: int = 0
    merged: EdgeSet = field(default_factory=EdgeSet.empty)
    merged_inside: int = 0

    @property
    def num_nodes(self) -> int:
        return int(self.parent.numel())

    def depth(self) -> torch.Tensor:
        """LongTensor [N]: edges from each node up to its root."""
        par = self.parent.tolist()
        depth = [-1] * len(par)
        for start in range(len(par)):
            path, x = [], start
            while x >= 0 and depth[x] < 0:
                path.append(x)
                x = par[x]
            base = depth[x] if x >= 0 else -1
            for node in reversed(path):
                base += 1
                depth[node] = base
        return torch.tensor(depth, dtype=torch.long)

    def is_valid(self) -> bool:
        """At most one parent per node and no cycle (every node reaches a root)."""
        par = self.parent.tolist()
        state = [0] * len(par)  # 0 unseen, 1 on the current path, 2 reaches a root
        for start in range(len(par)):
            path, x = [], start
            while x >= 0 and state[x] == 0:
                state[x] = 1
                path.append(x)
                x = par[x]
            if x >= 0 and state[x] == 1:
                return False
            for node in path:
                state[node] = 2
        counts = torch.bincount(self.edges.child, minlength=self.num_nodes) if len(self.edges) else None
        return counts is None or int(counts.max()) <= 1

    def stats(self) -> dict[str, int]:
        roots_with_children = int(torch.unique(self.edges.parent[self.parent[self.edges.parent] < 0]).numel()) \
            if len(self.edges) else 0
        out = {"edges": len(self.edges), "trees": roots_with_children,
               "max_depth": int(self.depth().max()) if self.num_nodes else 0,
               "dropped_cycle": self.dropped_cycle, "dropped_second_parent": self.dropped_second_parent}
        if len(self.merged):
            out.update(merged_ties=len(self.merged), merged_inside=self.merged_inside)
        return out


def build_forest(edges: EdgeSet, num_nodes: int, rank: torch.Tensor | None = None,
                 group: torch.Tensor | None = None, merged: EdgeSet | None = None) -> Forest:
    """The forest of one edge set (strongest edges first; stable for equal weights).

    Args:
        edges: the candidate edges.
        num_nodes: N.
        rank: LongTensor [E], optional: edges of a lower rank are offered before any edge of a higher rank
            (weight order within a rank).
        group: LongTensor [N], optional: the merged node of each node (its representative's id); the tree rules
            hold between merged nodes (see the module notes).
        merged: the merged nodes' ``member → representative`` ties, kept on the forest.
    """
    if not len(edges):
        order = torch.empty(0, dtype=torch.long)
    else:
        order = torch.argsort(-edges.weight, stable=True)
        if rank is not None:
            order = order[torch.argsort(rank[order], stable=True)]
    uf = UnionFind(num_nodes)
    par = [-1] * num_nodes
    grp = group.tolist() if group is not None else list(range(num_nodes))
    has_parent = [False] * num_nodes  # per merged node (representative id)
    keep: list[int] = []
    cycle = second = inside = 0
    ps, cs = edges.parent.tolist(), edges.child.tolist()
    for e in order.tolist():
        p, c = ps[e], cs[e]
        gp, gc = grp[p], grp[c]
        if p == c:
            cycle += 1
            continue
        if gp == gc:  # two members of one merged node
            inside += 1
            continue
        if has_parent[gc]:
            second += 1
            continue
        if not uf.union(gp, gc):
            cycle += 1
            continue
        par[c] = p
        has_parent[gc] = True
        keep.append(e)
    kept = edges.select(torch.tensor(sorted(keep), dtype=torch.long))
    return Forest(kept, torch.tensor(par, dtype=torch.long), cycle, second,
                  merged if merged is not None else EdgeSet.empty(), inside)


def fuse_trees(*edge_sets: EdgeSet, num_nodes: int, priority: bool = False, group: torch.Tensor | None = None,
               merged: EdgeSet | None = None) -> Forest:
    """Merge several trees/graphs on shared node ids into one forest.

    Args:
        edge_sets: e.g. ``(explicit, implicit)``; earlier sets win ties of weight.
        num_nodes: N (passages and query nodes).
        priority: every edge of an earlier set is offered before any edge of a later one (weight order
            within a set) — e.g. ``(implicit, explicit)`` keeps each query's tree whole and hangs the keyword
            edges onto it where they fit.
        group, merged: merged nodes (see :func:`build_forest`, :func:`merge_groups`).
    """
    edges = EdgeSet.empty()
    ranks = []
    for i, es in enumerate(edge_sets):
        edges = edges.cat(es)
        ranks.append(torch.full((len(es),), i, dtype=torch.long))
    rank = torch.cat(ranks) if priority and ranks else None
    return build_forest(edges, num_nodes, rank, group, merged)


def merge_groups(links: EdgeSet, num_nodes: int, inside: torch.Tensor) -> tuple[torch.Tensor, EdgeSet]:
    """Merged nodes from key-entity links: the connected components of ``links``.

    Args:
        links: ``entity`` edges (two passages that share a key entity).
        num_nodes: N.
        inside: BoolTensor [N], the nodes of the query trees: a component's representative is its smallest
            member inside them (else its smallest member).

    Returns:
        ``(group, ties)``: LongTensor [N], each node's representative (itself when unmerged), and the
        ``member → representative`` ties (relation ``entity``, weight 1).
    """
    uf = UnionFind(num_nodes)
    for a, b in zip(links.parent.tolist(), links.child.tolist()):
        uf.union(a, b)
    members: dict[int, list[int]] = {}
    for x in sorted(set(links.parent.tolist()) | set(links.child.tolist())):
        members.setdefault(uf.find(x), []).append(x)
    group = torch.arange(num_nodes)
    flags = inside.tolist()
    par: list[int] = []
    chi: list[int] = []
    for nodes in members.values():
        rep = next((x for x in nodes if flags[x]), nodes[0])
        group[torch.tensor(nodes)] = rep
        for x in nodes:
            if x != rep:
                par.append(x)
                chi.append(rep)
    return group, EdgeSet.from_lists(par, chi, [1.0] * len(par), ["entity"] * len(par))
