"""HyperRAG's passage graph: explicit keyword tree, query-guided implicit tree, their fusion, as one object.

Nodes: passages ``0..P-1`` then query nodes ``P..P+Q-1`` (queries whose graphs were built). ``variant``
picks what the Poincaré ball is trained on:

* ``explicit`` — the forest of the keyword edges (passages only);
* ``implicit`` — the forest of the query-guided edges: each query's relation chains first (the LLM's *support* /
  *complement* / *expand* edges between passages), then its *query* edges, so a chain ``q → p₁ → p₂`` keeps its
  depth (a query edge to ``p₂`` would otherwise take ``p₂``'s one parent and turn the tree into a star);
* ``fused`` — the trees merged on their shared nodes (:func:`~hyperrag.passage_graph.fusion.fuse_trees`):
  passages (same id) and passages that share a key entity (``entity`` links touching a query tree,
  :mod:`hyperrag.passage_graph.entities`). With ``entity_merge`` (§3.1.3) passages sharing a key entity are
  unified into one node (:func:`~hyperrag.passage_graph.fusion.merge_groups`: the tree rules hold between merged
  nodes; in the ball the members are tied to their representative); without it (the earlier variant) the entity
  links are offered as tree edges. With ``implicit_first`` (default) the query-guided forest is offered first,
  whole, then (entity links, then) the keyword forest, each joining where it neither gives a node a second
  parent nor closes a cycle.

Query nodes exist only in the labelled *question-root* variant (the builder's ``query_nodes``); the paper's query
graph has passages and passage–passage edges only, so ``questions`` stays empty; :attr:`graph_questions` lists
the questions whose query graphs joined (either form).

Training relations (:meth:`PassageGraph.relations`): every forest edge and merged-node tie in both directions
(``child ↔ parent``; negatives exclude both), so a tree pulls parents and children together while the Nickel & Kiela negatives
push unrelated passages apart. With ``query_closure_depth = d > 1`` each query node is also related to every
descendant of its tree at most ``d`` edges below it (Nickel & Kiela's transitive closure, restricted to the
query roots): a query node is pulled towards its second-hop passages too, not only towards the passages it is
linked to directly.

Incremental corpus updates (:class:`~hyperrag.hyperbolic.ball_index.BallIndex`): :meth:`PassageGraph.pin`
freezes the current forest's edges (``pinned``); :meth:`forest` then fuses the pinned forest with today's
forest (its merged nodes hold: one parent per merged node), in the order ``after_update`` names:

* ``query_first`` (default; §3.1.3 fuses query-guided trees with keyword trees and the paper's streaming keeps
  adding query trees — it never pins keyword edges): the pinned query-guided edges (every relation but
  ``keyword``), then the new query-guided edges, then the pinned keyword edges, then the new keyword edges.
  Guarantee: the query-guided part of the result is exactly the fusion of the pinned and the new query-guided
  edges alone (a streamed query edge is never crowded out by a pinned keyword edge); pinned keyword edges stay
  where they still fit.
* ``pinned_first`` (the earlier rule): every pinned edge, then the new query-guided edges, then the new keyword
  edges. Guarantee: every surviving pinned edge stays (the trained forest is kept whole); new edges join only
  where they neither give a node a second parent nor close a cycle.

An edge already pinned (same ends, same relation) is not offered a second time. :meth:`drop_passages` removes passages with every edge
touching them (pinned ones included); their children become roots of the pinned forest and are re-attached by
the remaining (unpinned) edges where those fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from hyperrag.graph.utils import with_reverse
from hyperrag.passage_graph.edges import RELATIONS, EdgeSet
from hyperrag.passage_graph.fusion import Forest, build_forest, fuse_trees, merge_groups

VARIANTS = ("explicit", "implicit", "fused")
AFTER_UPDATE = ("query_first", "pinned_first")


@dataclass
class PassageGraph:
    """Attributes:
        num_passages: P.
        questions: texts of the query nodes, node id ``P + i``.
        explicit: keyword edges (all, before the forest).
        implicit: query-guided edges (all, before the forest).
        stats: facts worth logging (LLM calls, stand-in use, ...).
        implicit_first: the fused forest offers the query trees first (else all edges by weight).
        pinned: the trained forest an incremental update keeps.
        entity: key-entity links of the corpus (all; the fused forest uses those touching a query tree).
        entity_merge: the fused forest unifies passages that share a key entity into one node (§3.1.3); else
            the entity links are offered as tree edges.
        graph_questions: the questions whose query graphs joined, in order (with or without a question node).
        after_update: ``query_first`` | ``pinned_first`` — how :meth:`forest` fuses the pinned forest with
            today's after a corpus update (see the module notes).
    """

    num_passages: int
    questions: list[str] = field(default_factory=list)
    explicit: EdgeSet = field(default_factory=EdgeSet.empty)
    implicit: EdgeSet = field(default_factory=EdgeSet.empty)
    stats: dict = field(default_factory=dict)
    implicit_first: bool = True
    pinned: EdgeSet = field(default_factory=EdgeSet.empty)
    entity: EdgeSet = field(default_factory=EdgeSet.empty)
    entity_merge: bool = False
    graph_questions: list[str] = field(default_factory=list)
    after_update: str = "query_first"

    def __post_init__(self) -> None:
        if self.after_update not in AFTER_UPDATE:
            raise ValueError(f"after_update must be one of {AFTER_UPDATE}, got {self.after_update!r}")

    @property
    def num_queries(self) -> int:
        return len(self.questions)

    @property
    def num_nodes(self) -> int:
        return self.num_passages + self.num_queries

    def forest(self, variant: str) -> Forest:
        """The variant's forest over all ``num_nodes`` nodes."""
        if variant not in VARIANTS:
            raise ValueError(f"graph variant must be one of {VARIANTS}, got {variant!r}")
        n = self.num_nodes
        if len(self.pinned):  # after a corpus update: the pinned and today's forests, in after_update's order
            free = PassageGraph(self.num_passages, self.questions, self.explicit, self.implicit,
                                implicit_first=self.implicit_first, entity=self.entity,
                                entity_merge=self.entity_merge).forest(variant)
            # the merged nodes of today's graph hold here too (one parent per merged node)
            group = torch.arange(n)
            if len(free.merged):
                group[free.merged.parent] = free.merged.child
            pinned = self.pinned
            known = set(zip(pinned.parent.tolist(), pinned.child.tolist(), pinned.relation.tolist()))
            fe = free.edges
            new = fe.select(torch.tensor([e not in known for e in
                                          zip(fe.parent.tolist(), fe.child.tolist(), fe.relation.tolist())],
                                         dtype=torch.bool))
            keyword = RELATIONS.index("keyword")
            pin_kw, new_kw = pinned.relation == keyword, new.relation == keyword
            if self.after_update == "query_first":  # query-guided edges (pinned, new), then keyword edges
                order = (pinned.select(~pin_kw), new.select(~new_kw), pinned.select(pin_kw), new.select(new_kw))
            else:  # pinned_first: the whole pinned forest, then the new query-guided edges, then new keyword edges
                order = (pinned, new.select(~new_kw), new.select(new_kw))
            out = fuse_trees(*order, num_nodes=n, priority=True, group=group if len(free.merged) else None,
                             merged=free.merged if len(free.merged) else None)
            out.merged_inside += free.merged_inside
            return out
        if variant == "explicit":
            return build_forest(self.explicit, n)
        query = RELATIONS.index("query")
        implicit = build_forest(self.implicit, n, rank=(self.implicit.relation == query).long())
        if variant == "implicit":
            return implicit
        explicit = build_forest(self.explicit, n).edges
        entity = self.entity_links(implicit.edges)
        if self.entity_merge:  # §3.1.3: passages sharing a key entity are one node
            group, ties = merge_groups(entity, n, self._inside(implicit.edges))
            first = (implicit.edges, explicit) if self.implicit_first else (explicit, implicit.edges)
            return fuse_trees(*first, num_nodes=n, priority=self.implicit_first, group=group, merged=ties)
        if self.implicit_first:
            return fuse_trees(implicit.edges, entity, explicit, num_nodes=n, priority=True)
        return fuse_trees(explicit, entity, implicit.edges, num_nodes=n)

    def entity_links(self, trees: EdgeSet) -> EdgeSet:
        """The key-entity edges with an endpoint among the passages of ``trees`` (the query trees)."""
        if not len(self.entity) or not len(trees):
            return EdgeSet.empty()
        inside = self._inside(trees)
        return self.entity.select(inside[self.entity.parent] | inside[self.entity.child])

    def _inside(self, trees: EdgeSet) -> torch.Tensor:
        """BoolTensor [N]: the endpoints of ``trees``."""
        inside = torch.zeros(self.num_nodes, dtype=torch.bool)
        if len(trees):
            inside[trees.parent] = True
            inside[trees.child] = True
        return inside

    def pin(self, variant: str) -> Forest:
        """Freeze the variant's current forest: later forests keep all of its (surviving) edges."""
        forest = self.forest(variant)
        self.pinned = forest.edges
        return forest

    def relations(self, variant: str, query_closure_depth: int = 1, query_edge_repeat: int = 1) -> torch.Tensor:
        """LongTensor [2, R]: the variant's forest edges, merged-node ties and query closure pairs, both directions.

        Args:
            variant: ``explicit`` | ``implicit`` | ``fused``.
            query_closure_depth: query node ↔ descendants at most this many edges below it (1: edges only).
            query_edge_repeat: direct ``query → passage`` edges appear this many times (a relation weight for
                the Nickel & Kiela loss: a query node is pulled harder to its first-round passages than to
                the second-hop ones).
        """
        forest = self.forest(variant)
        e = torch.cat([forest.edges.index, forest.merged.index], dim=1)
        if query_edge_repeat > 1:
            q = e[:, forest.edges.relation == RELATIONS.index("query")]
            e = torch.cat([e, q.repeat(1, query_edge_repeat - 1)], dim=1)
        if query_closure_depth > 1 and self.num_queries:
            e = torch.cat([e, self.query_closure(forest, query_closure_depth)], dim=1)
        return with_reverse(e)[0]  # repeats kept: they weigh in the loss

    def query_closure(self, forest: Forest, depth: int) -> torch.Tensor:
        """LongTensor [2, C]: ``(query node, descendant)`` pairs 2..``depth`` edges apart in ``forest``,
        following query-guided and entity edges only (a keyword child of a query's passage is not its evidence)."""
        keyword = RELATIONS.index("keyword")
        e = forest.edges
        children: dict[int, list[int]] = {}
        for p, c, r in zip(e.parent.tolist(), e.child.tolist(), e.relation.tolist()):
            if r != keyword:
                children.setdefault(p, []).append(c)
        pairs: list[tuple[int, int]] = []
        for q in range(self.num_passages, self.num_nodes):
            level = children.get(q, [])
            for _ in range(2, depth + 1):
                level = [c for x in level for c in children.get(x, [])]
                pairs.extend((q, c) for c in level)
        if not pairs:
            return torch.empty(2, 0, dtype=torch.long)
        return torch.tensor(pairs, dtype=torch.long).T

    def add_queries(self, questions: list[str], edges: EdgeSet, nodes: bool = True) -> None:
        """Append the query graphs of ``questions`` (their ``edges``) to the evolving graph, with a query node each
        (ids ``num_nodes ..``) when ``nodes`` (the question-root variant; not in the paper's query graph)."""
        if nodes:
            self.questions.extend(questions)
        self.graph_questions.extend(questions)
        self.implicit = self.implicit.cat(edges)

    def add_passages(self, count: int, explicit: EdgeSet, entity: EdgeSet | None = None) -> None:
        """Insert ``count`` passages after the current ones (query node ids shift by ``count``).

        ``explicit`` / ``entity``: the new keyword and key-entity edges, in the new numbering (passages
        ``0..P+count-1``).
        """
        p = self.num_passages
        shift = lambda t: torch.where(t >= p, t + count, t)
        imp = self.implicit
        self.implicit = EdgeSet(shift(imp.parent), shift(imp.child), imp.weight, imp.relation)
        pin = self.pinned
        self.pinned = EdgeSet(shift(pin.parent), shift(pin.child), pin.weight, pin.relation)
        self.num_passages += count
        self.explicit = self.explicit.cat(explicit)
        if entity is not None:
            self.entity = self.entity.cat(entity)

    def drop_queries(self, keep: torch.Tensor) -> torch.Tensor:
        """Remove query nodes (stale ones) and their edges; later query ids are renumbered.

        Args:
            keep: BoolTensor [Q], True for the query nodes to keep.

        Returns:
            LongTensor [N'] — for each remaining node its old id (``source`` for ``remap_nodes``).
        """
        p = self.num_passages
        node_keep = torch.cat([torch.ones(p, dtype=torch.bool), keep.bool()])
        new_id = torch.cumsum(node_keep.long(), 0) - 1
        self.implicit = _renumber(self.implicit, node_keep, new_id)
        self.pinned = _renumber(self.pinned, node_keep, new_id)
        self.questions = [q for q, k in zip(self.questions, keep.tolist()) if k]
        return torch.nonzero(node_keep).flatten()

    def drop_passages(self, keep: torch.Tensor) -> torch.Tensor:
        """Remove passages and every edge touching them (explicit, implicit, pinned); ids are renumbered.

        Query nodes stay (see :meth:`orphan_queries`). Args: ``keep`` BoolTensor [P]. Returns the
        ``source`` LongTensor [N'] (old id of each remaining node) for ``remap_nodes``.
        """
        node_keep = torch.cat([keep.bool(), torch.ones(self.num_queries, dtype=torch.bool)])
        new_id = torch.cumsum(node_keep.long(), 0) - 1
        self.explicit = _renumber(self.explicit, node_keep, new_id)
        self.implicit = _renumber(self.implicit, node_keep, new_id)
        self.pinned = _renumber(self.pinned, node_keep, new_id)
        self.entity = _renumber(self.entity, node_keep, new_id)
        self.num_passages = int(keep.sum())
        return torch.nonzero(node_keep).flatten()

    def query_passages(self) -> list[set[int]]:
        """Per query node, the nodes reachable from it through implicit edges (its query graph)."""
        children: dict[int, list[int]] = {}
        for p, c in zip(self.implicit.parent.tolist(), self.implicit.child.tolist()):
            children.setdefault(p, []).append(c)
        out = []
        for q in range(self.num_passages, self.num_nodes):
            seen: set[int] = set()
            stack = list(children.get(q, []))
            while stack:
                x = stack.pop()
                if x not in seen:
                    seen.add(x)
                    stack.extend(children.get(x, []))
            out.append(seen)
        return out

    def to_dict(self) -> dict:
        return {"num_passages": self.num_passages, "questions": self.questions,
                "explicit": self.explicit.to_dict(), "implicit": self.implicit.to_dict(), "stats": self.stats,
                "implicit_first": self.implicit_first, "pinned": self.pinned.to_dict(),
                "entity": self.entity.to_dict(), "entity_merge": self.entity_merge, "graph_questions": self.graph_questions,
                "after_update": self.after_update}

    @classmethod
    def from_dict(cls, d: dict) -> PassageGraph:
        opt = lambda k: EdgeSet.from_dict(d[k]) if k in d else EdgeSet.empty()
        return cls(d["num_passages"], list(d["questions"]), EdgeSet.from_dict(d["explicit"]),
                   EdgeSet.from_dict(d["implicit"]), dict(d.get("stats", {})), d.get("implicit_first", True),
                   opt("pinned"), opt("entity"), bool(d.get("entity_merge", False)),
                   list(d.get("graph_questions", d["questions"])), d.get("after_update", "pinned_first"))


def _renumber(edges: EdgeSet, node_keep: torch.Tensor, new_id: torch.Tensor) -> EdgeSet:
    """Edges between kept nodes, in the new numbering."""
    if not len(edges):
        return edges
    e = edges.select(node_keep[edges.parent] & node_keep[edges.child])
    return EdgeSet(new_id[e.parent], new_id[e.child], e.weight, e.relation)
