"""Entity-name canonicalisation: one spelling per entity across passages."""

from __future__ import annotations

import re
import unicodedata
from itertools import pairwise
from typing import Any

_NON_WORD = re.compile(r"[^\w]+", flags=re.UNICODE)
_NON_ASCII_ALNUM = re.compile(r"[^A-Za-z0-9 ]")

#: how OpenIE text becomes entity and relation names: ``canonical`` (:func:`canonical_name`) or ``hipporag``
#: (:func:`hipporag_name`, HippoRAG 2's ``text_processing``)
TEXT_FORMS = ("canonical", "hipporag")


def canonical_name(name: str) -> str:
    """NFKC, lower case, punctuation to spaces, whitespace collapsed.

    >>> canonical_name("  Marie  Curie's ")
    'marie curie s'
    """
    text = unicodedata.normalize("NFKC", name).lower()
    text = _NON_WORD.sub(" ", text).replace("_", " ")
    return " ".join(text.split())


def hipporag_name(name: str) -> str:
    """HippoRAG 2's ``text_processing``: lower case, every character but ``[A-Za-z0-9 ]`` to a space, stripped
    (runs of spaces kept; accented letters become spaces).

    >>> hipporag_name("  Jardín  Botánico ")
    'jard n  bot nico'
    """
    return _NON_ASCII_ALNUM.sub(" ", name.lower()).strip()


def name_normaliser(text_form: str) -> Any:
    """The name function of a text form (:data:`TEXT_FORMS`)."""
    if text_form == "canonical":
        return canonical_name
    if text_form == "hipporag":
        return hipporag_name
    raise ValueError(f"text_form must be one of {TEXT_FORMS}, got {text_form!r}")


def canonical_graph(graph: Any) -> dict[str, Any]:
    """A node-numbering-free view of a :class:`~hyperrag.graph.knowledge_graph.KnowledgeGraph`.

    Nodes are named (``entity`` names, passage ids), edges keyed by ``(type, name, name)`` with the two
    names sorted, and fact/entity supports given as sets of passage ids — so two graphs built in
    different orders (a full build vs. incremental updates) compare equal when they hold the same content.
    """
    names = [("e", n) for n in graph.entity_names] + [("p", p) for p in graph.passage_ids]
    u, v = graph.edge_index.tolist()
    edges = {}
    for a, b, t, w in zip(u, v, graph.edge_type.tolist(), graph.edge_weight.tolist()):
        key = (int(t), *sorted((names[a], names[b])))
        edges[key] = edges.get(key, 0.0) + float(w)

    def support(ptr: Any, idx: Any) -> list[frozenset[str]]:
        bounds, values = ptr.tolist(), idx.tolist()
        return [frozenset(graph.passage_ids[p] for p in values[x:y]) for x, y in pairwise(bounds)]

    return {
        "entities": set(graph.entity_names),
        "passages": set(graph.passage_ids),
        "edges": edges,
        "facts": dict(zip(graph.facts, support(graph.fact_passage_ptr, graph.fact_passage_idx))),
        "fact_entities": {f: (graph.entity_names[a], graph.entity_names[b])
                          for f, (a, b) in zip(graph.facts, graph.fact_entities.tolist())},
        "entity_passages": dict(zip(graph.entity_names, support(graph.entity_passage_ptr, graph.entity_passage_idx))),
    }


def graph_differences(a: Any, b: Any, atol: float = 1e-5) -> list[str]:
    """Human-readable differences between two graphs' canonical forms (empty when they are equal)."""
    ca, cb = canonical_graph(a), canonical_graph(b)
    diffs = []
    for part in ("entities", "passages"):
        if ca[part] != cb[part]:
            diffs.append(f"{part}: only in first {sorted(ca[part] - cb[part])[:5]}, "
                         f"only in second {sorted(cb[part] - ca[part])[:5]}")
    for part in ("facts", "fact_entities", "entity_passages"):
        if ca[part] != cb[part]:
            keys = [k for k in set(ca[part]) | set(cb[part]) if ca[part].get(k) != cb[part].get(k)]
            diffs.append(f"{part}: {len(keys)} differ, e.g. {sorted(keys, key=str)[:3]}")
    ea, eb = ca["edges"], cb["edges"]
    if set(ea) != set(eb):
        diffs.append(f"edges: only in first {sorted(set(ea) - set(eb), key=str)[:3]}, "
                     f"only in second {sorted(set(eb) - set(ea), key=str)[:3]}")
    bad = [k for k in set(ea) & set(eb) if abs(ea[k] - eb[k]) > atol]
    if bad:
        diffs.append(f"edge weights: {len(bad)} differ, e.g. {[(k, ea[k], eb[k]) for k in bad[:3]]}")
    return diffs
