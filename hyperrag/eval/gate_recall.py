"""Gold-hop recall of a causal-gate candidate rule: does the rule propose the module pairs a question needs?

A gate matters when a question's reasoning jumps between two modules the graph keeps apart. MuSiQue's
decompositions give the jumps: hop i and hop i + 1 of a question are answered by two gold passages, and the
entities of those passages sit in modules. The **gold-hop pairs** of a question are the module pairs Algorithm 2
could gate (:mod:`hyperrag.hierarchy.gates`) that join an entity of hop i to an entity of hop i + 1:

* intra-layer: two modules of one level, at least ``min_distance`` hops apart in that level's module graph;
* inter-layer: a module of level l holding one hop's entity and a module of level l − 1 holding the other's, the
  lower one not a descendant of the upper one, and its level-l module at least ``min_distance`` hops from it.

Questions without a decomposition (HolisQA: gold sentences, no hops) can stand in with their gold passages,
unordered (:func:`gold_passage_entities_of`, ``all_pairs=True``): every two of a question's gold passages are one
"transition". Pairs whose two hops share a module, or sit in adjacent modules, need no gate and are not counted. The recall of
a rule is the share of gold-hop pairs among its candidates (``pairs``), and the share of (question, hop
transition) with a gold-hop pair that keep at least one (``transitions``).

    pairs = gold_hop_pairs(tree, entity_edges, hop_entities, min_distance=2)
    gold_hop_recall(pairs, asked)       # asked: GateBuilder.count(...)["asked"]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from hyperrag.hierarchy.gates import level_cover, near_modules
from hyperrag.hierarchy.modules import ModuleTree
from hyperrag.hierarchy.summaries import descendants

Pair = tuple[int, int]  # intra: (smaller id, larger id); inter: (upper module, lower module)


def normalise(a: int, b: int, kind: str) -> Pair:
    return (min(a, b), max(a, b)) if kind == "intra" else (a, b)


def gold_hop_pairs(tree: ModuleTree, entity_edges: torch.Tensor,
                   hop_entities: Sequence[Sequence[Sequence[int]]], min_distance: int = 2,
                   all_pairs: bool = False) -> list[list[set[Pair]]]:
    """Per question, per hop transition (i → i + 1), the gold-hop module pairs (see the module docstring).

    Args:
        tree: the module tree (folded levels).
        entity_edges: LongTensor [2, M], the entity graph the modules partition.
        hop_entities: per question, per hop, the entity ids of its gold passage.
        min_distance: Algorithm 2's topological distance (the gate settings' ``min_distance``).
        all_pairs: every two hops of a question are a transition, not only consecutive ones (unordered gold
            passages: :func:`gold_passage_entities_of`).
    """
    level = tree.level.tolist()
    levels = sorted(set(level))
    cover = {lv: level_cover(tree, lv).tolist() for lv in levels}
    near = {lv: (near_modules(tree, entity_edges, lv, min_distance - 1) if min_distance > 1 else {})
            for lv in levels}
    below = descendants(tree)

    def at(lv: int, ents: Iterable[int]) -> set[int]:
        return {cover[lv][e] for e in ents if level[cover[lv][e]] == lv}

    out: list[list[set[Pair]]] = []
    for hops in hop_entities:
        per_q: list[set[Pair]] = []
        for first, second in (itertools.combinations(hops, 2) if all_pairs else itertools.pairwise(hops)):
            pairs: set[Pair] = set()
            for lv in levels:
                a_mods, b_mods = at(lv, first), at(lv, second)
                for a in a_mods:  # intra-layer
                    for b in b_mods:
                        if a != b and b not in near[lv].get(a, ()):
                            pairs.add(normalise(a, b, "intra"))
                if lv - 1 not in cover:
                    continue
                for up_ents, down_ents in ((first, second), (second, first)):  # inter-layer, both ways
                    for a in at(lv, up_ents):
                        for b in at(lv - 1, down_ents):
                            host = cover[lv][int(tree.entities(b)[0])]
                            if b not in below[a] and host != a and host not in near[lv].get(a, ()):
                                pairs.add((a, b))
            per_q.append(pairs)
        out.append(per_q)
    return out


def gold_hop_recall(pairs: list[list[set[Pair]]], asked: Iterable[tuple[int, int, str]]) -> dict[str, Any]:
    """Share of gold-hop pairs a candidate rule asks about.

    Args:
        pairs: :func:`gold_hop_pairs`.
        asked: the rule's candidates ``(a, b, "intra" | "inter")`` (``GateBuilder.count(...)["asked"]``).
    Returns:
        ``pairs`` (micro recall over distinct gold-hop pairs), ``transitions`` (share of hop transitions with
        a gold-hop pair that keep one), ``questions`` (share of questions with a gold-hop pair whose every such
        transition keeps one), and the counts behind them.
    """
    kept = {normalise(a, b, kind) for a, b, kind in asked}
    every = set().union(*(p for q in pairs for p in q)) if pairs else set()
    transitions = [bool(p & kept) for q in pairs for p in q if p]
    questions = [all(p & kept for p in q if p) for q in pairs if any(q)]

    def share(xs: list[bool]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    return {"pairs": len(every & kept) / len(every) if every else None, "gold_hop_pairs": len(every),
            "transitions": share(transitions), "transitions_with_pairs": len(transitions),
            "questions": share(questions), "questions_with_pairs": len(questions), "candidates": len(kept)}


def _passage_entities(graph: Any) -> tuple[list[list[int]], dict[str, int]]:
    """Per passage of ``graph``, the ids of the entities it mentions; and each passage id's position."""
    ptr, idx = graph.entity_passage_ptr.tolist(), graph.entity_passage_idx.tolist()
    ents_of: list[list[int]] = [[] for _ in range(graph.num_passages)]
    for e in range(graph.num_entities):
        for p in idx[ptr[e]: ptr[e + 1]]:
            ents_of[p].append(e)
    return ents_of, {pid: i for i, pid in enumerate(graph.passage_ids)}


def hop_entities_of(dataset: Any, graph: Any) -> list[list[list[int]]]:
    """Per query of ``dataset`` (with a decomposition), per hop, the entity ids of its gold passage in ``graph``
    (a :class:`~hyperrag.graph.knowledge_graph.KnowledgeGraph`); hops without a gold passage in the graph are
    dropped."""
    ents_of, pos = _passage_entities(graph)
    out = []
    for q in dataset.queries:
        hops = [ents_of[pos[h.gold_id]] for h in q.decomposition if h.gold_id in pos]
        out.append([h for h in hops if h])
    return out


def gold_passage_entities_of(dataset: Any, graph: Any, only_without_hops: bool = False) -> list[list[list[int]]]:
    """Per query of ``dataset``, per gold passage (``gold_ids``, in their given order: no hop order is implied),
    the entity ids of that passage in ``graph``; passages absent from the graph or without entities are dropped.
    With ``only_without_hops``, a query that has a decomposition gets no entry (its hops are used instead)."""
    ents_of, pos = _passage_entities(graph)
    out = []
    for q in dataset.queries:
        if only_without_hops and q.decomposition:
            out.append([])
            continue
        golds = [ents_of[pos[g]] for g in dict.fromkeys(q.gold_ids) if g in pos]
        out.append([g for g in golds if g])
    return out
