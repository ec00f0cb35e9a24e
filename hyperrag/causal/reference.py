"""CRC's reference (CDF-RAG §3.3): the causal paths a causal graph holds from each *question* itself.

Causal Retrieval Coverage counts the retrieved items that lie on "a causal path aligned with the query"; every
method is judged against the same paths — the traversal of one causal graph from the original question, not from
the method's own (refined) queries. :func:`hyperrag.eval.causal.causal_retrieval_coverage` does the counting;
``evaluate.py`` hands :func:`causal_reference_from_index` to the re-scoring (the evaluation layer sits below the
causal one, so it does not import it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.eval.causal import pair_key

if TYPE_CHECKING:
    from hyperrag.causal.graph import CausalGraph
    from hyperrag.causal.traversal import TraversalSettings
    from hyperrag.protocols import Encoder

CausalItems = tuple[set[str], set[tuple[str, str]]]


def reference_causal_items(graph: CausalGraph, settings: TraversalSettings, encoder: Encoder,
                           questions: Sequence[str]) -> list[CausalItems]:
    """Per question, the passages and ``(cause, effect)`` edges (normalised by :func:`pair_key`) of the causal
    paths the traversal finds from the question's embedding (``encoder.encode(questions) -> [Q, D]``)."""
    from hyperrag.causal.traversal import CausalTraversal

    if not questions:
        return []
    traversal = CausalTraversal(graph, settings)
    paths = traversal(encoder.encode(list(questions), desc="questions").float().cpu())
    out = []
    for ps in paths:
        edges = {e for p in ps for e in p.edges}
        out.append(({graph.edge_info[e]["passage_id"] for e in edges}, {pair_key(*graph.triple(e)) for e in edges}))
    return out


def causal_reference_from_index(directory: str | Path, traversal: Mapping[str, Any] | None, encoder: Encoder,
                                questions: Sequence[str]) -> list[CausalItems]:
    """:func:`reference_causal_items` over the causal index in ``directory`` (its ``causal_graph.json``), with the
    traversal settings ``traversal`` (a CDF-RAG run's) or, when None, ``method/cdfrag.yaml``'s."""
    from hyperrag.causal.graph import CausalGraph
    from hyperrag.causal.traversal import TraversalSettings
    from hyperrag.config import method_settings

    settings = TraversalSettings(**traversal) if traversal is not None else method_settings("cdfrag").traversal
    return reference_causal_items(CausalGraph.load(directory), settings, encoder, questions)


__all__ = ["CausalItems", "causal_reference_from_index", "reference_causal_items"]
