"""CRC's reference (CDF-RAG §3.3, §4.2): the items "on a verified causal path aligned with the query".

The paper checks retrieved items against a gold-standard causal graph (GPT-4 verified). Two references, neither
made by the run's own retrieval:

* **gold** (``evaluate.py crc_reference=gold``, the default): the question's gold supporting passages (its
  reasoning chain) and the causal pairs a causal graph extracted from those passages (:func:`gold_causal_items`);
  every method and every ablation stage is judged against the same items;
* **graph** (``crc_reference=graph``): the causal paths a causal graph holds from the original question
  (:func:`reference_causal_items`).

The graph is, by default, the dataset's **fixed reference graph** (:func:`build_reference_graph`, ``python -m
hyperrag.causal reference data=<dataset> [llm=...]``): built once from the gold supporting passages only, with the
CDF-RAG preset's extraction settings, pair classifier (``classifier: auto``; the labelled rule priors when no
trained one is in ``models/``) and verifier (the LLM given; with ``llm=none`` or the oracle — which has no gold for
pair verification — the pairs stay unverified, and the label says so), stored under
``<cache_dir>/crc_reference/<dataset>/`` with its label ``crc_reference.json``, and read by every method's CRC.
``evaluate.py causal_index=run`` takes a CDF-RAG run's own graph instead (its own extraction: not like for like),
``causal_index=DIR`` any causal index.

:func:`hyperrag.eval.causal.causal_retrieval_coverage` does the counting; ``evaluate.py`` hands
:func:`causal_reference_from_index` to the re-scoring (the evaluation layer sits below the causal one, so it does not
import it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.eval.causal import pair_key

if TYPE_CHECKING:
    from hyperrag.causal.graph import CausalGraph
    from hyperrag.causal.settings import CausalGraphSettings
    from hyperrag.causal.traversal import TraversalSettings
    from hyperrag.data.types import Dataset
    from hyperrag.protocols import Encoder, LanguageModel

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


def gold_passage_positions(dataset: Dataset) -> list[int]:
    """Corpus positions of every passage some query names as gold support, in corpus order."""
    gold = {str(g) for q in dataset.queries for g in q.gold_ids}
    return [j for j, pid in enumerate(dataset.corpus.ids) if pid in gold]


def build_reference_graph(dataset: Dataset, encoder: Encoder, settings: CausalGraphSettings, out_dir: str | Path,
                          classifier_path: str | Path | None = None, llm: LanguageModel | None = None
                          ) -> dict[str, Any]:
    """CRC's fixed reference graph of ``dataset``: the causal graph of its gold supporting passages only (OpenIE
    triples from the dataset's file when ``settings.use_openie``), scored by the classifier at ``classifier_path``
    (None: the rule priors) and verified by ``llm`` when ``settings.verify`` (unverified without one, or where
    every call fails as the oracle's do); saved to ``out_dir`` (``causal_graph.json`` / ``.pt``) with its label
    ``crc_reference.json``, which is returned.

    Raises:
        InputError: no query of the dataset names a gold passage in its corpus.
    """
    from hyperrag.causal.graph import load_pair_classifier, update_causal_graph
    from hyperrag.data.types import Corpus
    from hyperrag.data.types import Dataset as DatasetType
    from hyperrag.errors import InputError
    from hyperrag.eval.causal import REFERENCE_LABEL_FILE
    from hyperrag.utils.atomic import atomic_write_text

    positions = gold_passage_positions(dataset)
    if not positions:
        raise InputError("no query names a gold supporting passage of the corpus: CRC's reference graph is built "
                         "from them", field="gold_ids")
    corpus = Corpus([dataset.corpus[j] for j in positions], source=f"gold passages of {dataset.corpus.source}")
    gold_only = DatasetType(name=dataset.name, corpus=corpus, queries=dataset.queries)
    triples = None
    if settings.use_openie and dataset.openie_path is not None:
        from hyperrag.data.openie import read_openie

        every = read_openie(dataset.openie_path, dataset.corpus).triples
        triples = [every[j] if j < len(every) else [] for j in positions]
    classifier = load_pair_classifier(classifier_path) if classifier_path else None
    graph, _ = update_causal_graph(gold_only, encoder, settings, classifier=classifier, llm=llm,
                                   openie_triples=triples)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    graph.save(out)
    verified = sum("llm" in info for info in graph.edge_info)
    available = bool(getattr(llm, "available", False))
    verifier = (f"{getattr(llm, 'kind', '?')}:{getattr(llm, 'model', None)}" if settings.verify and available
                else None)
    label = {
        "dataset": dataset.name, "gold_passages": len(positions),
        "queries_with_gold": sum(bool(q.gold_ids) for q in dataset.queries),
        "edges": graph.num_edges, "passages_with_edges": len({i["passage_id"] for i in graph.edge_info}),
        "classifier": str(classifier_path) if classifier_path else None,
        "classifier_label": ("UniCausal-trained pair classifier" if classifier_path
                             else "rule priors (LLM-free fallback: no trained pair classifier)"),
        "verifier": verifier, "pairs_verified": verified,
        "verifier_label": (f"{verifier}: {verified}/{graph.num_edges} pairs verified" if verifier and verified
                           else "falls back: pairs unverified (" + ("verification off" if not settings.verify
                                else "no LLM" if not available else f"{verifier}: every call failed") + ")"),
        "llm_asked": graph.stats.get("llm_asked"), "llm_failed": graph.stats.get("llm_failed_this_build"),
        "gold_ids": [dataset.corpus.ids[j] for j in positions],
    }
    atomic_write_text(out / REFERENCE_LABEL_FILE, json.dumps(label, indent=1))
    return label


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


__all__ = ["CausalItems", "build_reference_graph", "causal_reference_from_index", "gold_causal_items",
           "gold_passage_positions", "reference_causal_items"]
