"""Explicit passage edges from shared keywords (HyperRAG's keyword graph), through an inverted index.

``sim(p_i, p_j) = |K_i ∩ K_j| / min(|K_i|, |K_j|)`` (the overlap coefficient of the YAKE keyword sets); a
pair becomes an edge when ``sim ≥ θ`` (0.15), and every passage keeps at most ``max_neighbors`` (3).

Only pairs that share a keyword are ever looked at: the postings of each keyword (keyword → passages) are
walked, so the cost is Σ_k df_k² rather than P². Keywords in more than ``max_keyword_df`` passages (corpus
boilerplate such as "film" or "american") are skipped — they would make the walk quadratic and link nothing
specific; this is the only departure from the formula and it is a setting (``null`` keeps every keyword).

Degree cap: candidate pairs are taken strongest first (ties: the smaller pair of ids) and accepted while
both endpoints have fewer than ``max_neighbors`` links, so no passage ever exceeds the cap.

Direction (parent → child), needed by the tree fusion: the more *general* passage is the parent — the one
linked to more passages before the cap (its keywords are shared widely), then the one with more keywords,
then the smaller id.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from hyperrag.config.validation import PositiveInt, Probability, settings
from hyperrag.passage_graph.edges import EdgeSet


@settings
class ExplicitSettings:
    """Keyword-edge settings (HyperRAG's ``explicit``).

    Attributes:
        threshold: θ; pairs with ``sim ≥ θ`` are candidates.
        max_neighbors: links per passage at most.
        max_keyword_df: skip keywords held by more passages than this (``None``: keep all).
    """

    threshold: Probability
    max_neighbors: PositiveInt
    max_keyword_df: PositiveInt | None


def keyword_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Overlap coefficient ``|a ∩ b| / min(|a|, |b|)`` (0 when either set is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def keyword_edges(keyword_sets: Sequence[frozenset[str]], settings: ExplicitSettings) -> EdgeSet:
    """Explicit edges of a corpus.

    Args:
        keyword_sets: P keyword sets (from :func:`~hyperrag.passage_graph.keywords.extract_keywords`).
        settings: θ, the degree cap and the keyword document-frequency cap (:class:`ExplicitSettings`).

    Returns:
        An :class:`EdgeSet` of ``keyword`` edges (parent → child), weight = sim, each pair once.
    """
    threshold, max_neighbors, max_keyword_df = (settings.threshold, settings.max_neighbors,
                                                settings.max_keyword_df)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, ks in enumerate(keyword_sets):
        for k in ks:
            postings[k].append(i)
    shared: Counter[tuple[int, int]] = Counter()
    for plist in postings.values():
        df = len(plist)
        if df < 2 or (max_keyword_df is not None and df > max_keyword_df):
            continue
        for a in range(df):
            pa = plist[a]
            for b in range(a + 1, df):
                shared[(pa, plist[b])] += 1
    candidates = []
    for (i, j), n in shared.items():
        denom = min(len(keyword_sets[i]), len(keyword_sets[j]))
        sim = n / denom
        if sim >= threshold:
            candidates.append((sim, i, j))
    reach = Counter()
    for _, i, j in candidates:
        reach[i] += 1
        reach[j] += 1
    return _accept_strongest(candidates, keyword_sets, Counter(), reach, max_neighbors)


def keyword_edges_incremental(keyword_sets: Sequence[frozenset[str]], first_new: int, existing: EdgeSet,
                              settings: ExplicitSettings) -> EdgeSet:
    """Explicit edges of the passages ``first_new..`` appended to a corpus whose edges are ``existing``.

    Only the new passages' neighbours are computed: the postings of the new passages' keywords are walked
    (document frequency over the whole grown corpus, same ``max_keyword_df`` rule), pairs (new, any) scored
    with the overlap coefficient, and accepted strongest first while both endpoints stay under
    ``max_neighbors`` — an old passage's degree counts its ``existing`` edges, so no cap is ever exceeded.
    Old–old pairs are never looked at, and existing edges are never removed (a full rebuild may pick a
    different set of old passages' neighbours when a new passage outranks one of them; the insert keeps the
    trained graph instead). Direction as in :func:`keyword_edges`: the endpoint with more candidate links
    (plus existing edges) is the parent, then more keywords, then the smaller id.

    Returns:
        The new ``keyword`` edges (every one has a new endpoint).
    """
    threshold, max_neighbors, max_keyword_df = (settings.threshold, settings.max_neighbors,
                                                settings.max_keyword_df)
    n = len(keyword_sets)
    postings: dict[str, list[int]] = defaultdict(list)
    for i, ks in enumerate(keyword_sets):
        for k in ks:
            postings[k].append(i)
    shared: Counter[tuple[int, int]] = Counter()
    for i in range(first_new, n):
        for k in keyword_sets[i]:
            plist = postings[k]
            if max_keyword_df is not None and len(plist) > max_keyword_df:
                continue
            for j in plist:
                if j < i:  # (old, new) pairs and each (new, new) pair once
                    shared[(j, i)] += 1
    candidates = []
    for (j, i), c in shared.items():
        sim = c / min(len(keyword_sets[i]), len(keyword_sets[j]))
        if sim >= threshold:
            candidates.append((sim, j, i))
    degree: Counter[int] = Counter()
    for x in existing.parent.tolist() + existing.child.tolist():
        degree[x] += 1
    reach = Counter(degree)
    for _, j, i in candidates:
        reach[i] += 1
        reach[j] += 1
    return _accept_strongest(candidates, keyword_sets, degree, reach, max_neighbors)


def _accept_strongest(candidates: list[tuple[float, int, int]], keyword_sets: Sequence[frozenset[str]],
                      degree: Counter, reach: Counter, max_neighbors: int) -> EdgeSet:
    """Accept ``(sim, i, j)`` pairs strongest first while both endpoints stay under ``max_neighbors``
    (``degree`` is updated in place); the endpoint with more candidate links (``reach``), then more keywords,
    then the smaller id is the parent."""
    candidates.sort(key=lambda t: (-t[0], t[1], t[2]))
    parent, child, weight = [], [], []
    for sim, i, j in candidates:
        if degree[i] >= max_neighbors or degree[j] >= max_neighbors:
            continue
        degree[i] += 1
        degree[j] += 1
        gi = (reach[i], len(keyword_sets[i]), -i)
        gj = (reach[j], len(keyword_sets[j]), -j)
        p, c = (i, j) if gi > gj else (j, i)
        parent.append(p)
        child.append(c)
        weight.append(sim)
    return EdgeSet.from_lists(parent, child, weight, ["keyword"] * len(parent))
