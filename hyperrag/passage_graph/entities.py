"""Key-entity links: the fusion's second kind of shared node (HyperRAG §3.1.3).

The paper fuses the explicit and implicit trees on shared nodes, "nodes that reference the same passage or
contain the same key entity". A passage's key entity is the entity it is about — its title (encyclopaedic
corpora such as MuSiQue, HotpotQA and 2Wiki title every paragraph by its subject). Two passages share a key
entity when

* they have the same (normalised) title — two paragraphs about one subject; or
* one passage's text names the other's title as whole words — the first mentions the entity the second is
  about (the bridge of a multi-hop question).

:func:`key_entity_edges` finds every such pair of the corpus through a token n-gram lookup (no P² scan):
``entity`` edges, parent → child = the passage that names the entity → the passage about it (for equal titles:
the smaller id first), weight 1. The fused forest merges the passages they join into one node (``fusion: merge``,
the paper's) or offers them as tree edges (``fusion: link``). Titles shorter than ``min_chars`` or named by more than ``max_passages``
passages (common words, countries) link nothing. The fused forest offers only the entity edges that touch a
query tree (:meth:`~hyperrag.passage_graph.graph.PassageGraph.forest`), so the merge stays query-centric.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from hyperrag.config.validation import PositiveInt, settings
from hyperrag.passage_graph.edges import EdgeSet

_TOKEN = re.compile(r"\w+", re.UNICODE)


@settings
class KeyEntitySettings:
    """Attributes:
        source: ``title`` (a passage's key entity is its title) or ``none`` (no entity merging).
        min_chars: titles shorter than this (normalised) are not key entities.
        max_passages: a title named by more passages than this links nothing (too common to merge on).
        fusion: ``merge`` — the fused forest unifies passages that share a key entity into one node (§3.1.3;
            :func:`~hyperrag.passage_graph.fusion.merge_groups`) — or ``link`` (the earlier variant: the entity
            links are offered as parent → child tree edges).
        match: what "contain the same key entity" joins: ``named`` (broad: equal titles, or one passage's text
            names the other's title — merged nodes then chain through mentions, across questions) or
            ``same_title`` (narrow: equal titles only — two passages about one subject; a merged node is the
            passages of one title, no chaining through mentions).
    """

    source: Literal["title", "none"]
    min_chars: PositiveInt
    max_passages: PositiveInt
    fusion: Literal["merge", "link"]
    match: Literal["named", "same_title"]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def key_entity_edges(titles: Sequence[str | None], texts: Sequence[str], settings: KeyEntitySettings,
                     first: int = 0) -> EdgeSet:
    """Entity edges of a corpus, or of its passages ``first..`` against all of it (an insert).

    Args:
        titles: P titles (``None`` / empty: the passage has no key entity).
        texts: P passage texts (without the title).
        settings: :class:`KeyEntitySettings`.
        first: only pairs with an endpoint at or after ``first`` are returned (0: all pairs).

    Returns:
        ``entity`` edges (parent names the child's key entity; equal titles: smaller id → larger), each pair once.
    """
    if settings.source == "none":
        return EdgeSet.empty()
    by_title: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, title in enumerate(titles):
        toks = tuple(_tokens(title or ""))
        if toks and len(" ".join(toks)) >= settings.min_chars:
            by_title[toks].append(i)
    lengths_by_first: dict[str, set[int]] = defaultdict(set)  # a title's first token → its lengths
    for t in by_title:
        lengths_by_first[t[0]].add(len(t))
    named_by: dict[tuple[str, ...], set[int]] = defaultdict(set)
    for i, text in enumerate(texts):
        toks = _tokens(text)
        for s, tok in enumerate(toks):
            for n in lengths_by_first.get(tok, ()):
                gram = tuple(toks[s:s + n])
                if gram in by_title:
                    named_by[gram].add(i)
    pairs: set[tuple[int, int]] = set()
    for gram, owners in by_title.items():
        for a_pos, a in enumerate(owners):  # same key entity: equal titles
            pairs.update((a, b) for b in owners[a_pos + 1:])
        namers = named_by.get(gram, set())
        if settings.match == "same_title" or len(namers) > settings.max_passages:
            continue
        pairs.update((i, o) for i in namers for o in owners if i != o)
    # both directions of one pair: keep the mention from the smaller id
    kept = sorted({(a, b) for a, b in pairs if (b, a) not in pairs or a < b})
    kept = [(a, b) for a, b in kept if a >= first or b >= first]
    return EdgeSet.from_lists([a for a, _ in kept], [b for _, b in kept], [1.0] * len(kept),
                              ["entity"] * len(kept))
