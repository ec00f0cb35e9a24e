"""CRC's reference (CDF-RAG §3.3, §4.2): the items "on a verified causal path aligned with the query".

The paper checks retrieved items against a gold-standard causal graph (GPT-4 verified). Two references, neither
made by the run's own retrieval:

* **gold** (``evaluate.py crc_reference=gold``, the default): the question's gold supporting passages (its
  reasoning chain) and the causal pairs a causal graph extracted from those passages (:func:`gold_causal_items`);
  every method and every ablation stage is judged against the same items;
* **graph** (``crc_reference=graph``): the causal paths a causal graph holds from the original question
  (:func:`reference_causal_items`) — a held-out graph via ``causal_index=DIR``; the run's own graph only when none
  is given (then the reference shares the run's extraction).

:func:`hyperrag.eval.causal.causal_retrieval_coverage` does the counting; ``evaluate.py`` hands
:func:`causal_reference_from_index` to the re-scoring (the evaluation layer sits below the causal one, so it does not
import it).
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


def gold_causal_items(graph: CausalGraph | None, gold_ids: Sequence[Sequence[str]]) -> list[CausalItems | None]:
    """Per question, its gold passages and the ``(cause, effect)`` pairs (normalised by :func:`pair_key`) of the
    graph's edges extracted from them; None for a question without gold passages."""
    by_passage: dict[str, set[tuple[str, str]]] = {}
    if graph is not None:
        for e, info in enumerate(graph.edge_info):
            by_passage.setdefault(str(info["passage_id"]), set()).add(pair_key(*graph.triple(e)))
    return [(set(map(str, g)), set().union(*(by_passage.get(str(p), set()) for p in g))) if g else None
            for g in gold_ids]


def causal_reference_from_index(directory: str | Path, traversal: Mapping[str, Any] | None, encoder: Encoder,
                                questions: Sequence[str], gold_ids: Sequence[Sequence[str]] | None = None
                                ) -> list[CausalItems | None]:
    """Over the causal index in ``directory`` (its ``causal_graph.json``): with ``gold_ids``,
    :func:`gold_causal_items`; else :func:`reference_causal_items` with the traversal settings ``traversal`` (a
    CDF-RAG run's) or, when None, ``method/cdfrag.yaml``'s."""
    from hyperrag.causal.graph import CausalGraph
    from hyperrag.causal.traversal import TraversalSettings
    from hyperrag.config import method_settings

    graph = CausalGraph.load(directory)
    if gold_ids is not None:
        return gold_causal_items(graph, gold_ids)
    settings = TraversalSettings(**traversal) if traversal is not None else method_settings("cdfrag").traversal
    return list(reference_causal_items(graph, settings, encoder, questions))


__all__ = ["CausalItems", "causal_reference_from_index", "gold_causal_items", "reference_causal_items"]
