"""Dataset preparation shared by entry points: where a dataset's OpenIE triples come from, or which index
directory it is retrieved over; and building the configured retriever."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.data.types import Dataset

if TYPE_CHECKING:
    from hyperrag.extraction.settings import ExtractorSettings
    from hyperrag.protocols import Encoder, LanguageModel
    from hyperrag.retrievers.base import Retriever

log = logging.getLogger(__name__)


def released_model(path: str | Path) -> str | None:
    """The model a released OpenIE file names: ``openie_gpt-3.5-turbo-1106.json`` → ``gpt-3.5-turbo-1106``,
    HippoRAG 2's ``openie_results_ner_<model>.json`` → ``<model>``; a file this framework wrote carries its own
    ``model`` (read from its name's style: ``openie_spacy_*`` → the spaCy label)."""
    name = Path(path).name.removesuffix(".json")
    if name.startswith("openie_spacy_"):
        from hyperrag.extraction.spacy_pipeline import MODEL_LABEL

        return MODEL_LABEL
    for prefix in ("openie_results_ner_", "openie_"):
        if name.startswith(prefix):
            return name[len(prefix):] or None
    return None


def _record(source: str, model: str | None, path: str | Path | None, **more: Any) -> dict[str, Any]:
    return {"source": source, "model": model, "path": str(path) if path else None, **more}


def resolve_openie(dataset: Dataset, llm: LanguageModel | None, cache_dir: str | Path,
                   extraction: str | None = None, shared_graph: str | None = None,
                   extractor: ExtractorSettings | None = None) -> Dataset:
    """Point ``dataset.openie_path`` at the triples to build the graph from, and record where they came from in
    ``dataset.extraction`` (``{"source": "spacy" | "llm" | "file" | "none", "model", "path"}``).

    * ``extractor.source == "spacy"`` (``extractor=spacy``): spaCy's LLM-free triples for every dataset and
      method (:func:`hyperrag.extraction.spacy_openie.spacy_openie`, cached under ``cache_dir/openie`` and
      ``cache_dir/spacy``). It takes precedence where the settings below overlap: over a released file
      (``data.openie``), over ``openie_source == "llm"``, over ``shared_graph == "graphrag"`` (the spaCy graph is
      then the one graph of every method) and over HugRAG's ``extraction == "graphrag"`` (the caller turns the
      method's own LLM extraction off: :func:`defer_to_extractor`).
    * ``shared_graph == "graphrag"`` (HugRAG's tables: "a unified root knowledge graph", its Appendix F.3 and
      B.1): every method's graph is the GraphRAG-style extraction (Fig 8) of the corpus with the configured LLM,
      one cached extraction for all of them; a passage the LLM cannot extract keeps the dataset's record; without
      an LLM, the dataset's file;
    * ``openie_source == "llm"`` or no OpenIE file: extract with the LLM when one is available (resumable,
      cached under ``cache_dir/openie`` — a finished extraction is reused with zero requests);
    * otherwise, or without an LLM, the dataset's own file is used as is;
    * ``extraction == "graphrag"`` (the method's ``retriever.extraction``, HugRAG): the retriever runs its own
      GraphRAG-style extraction on ``openie_source == "llm"`` datasets, so the HippoRAG-style OpenIE is skipped.
    """
    if extractor is not None and extractor.source == "spacy":
        from hyperrag.extraction.spacy_openie import spacy_openie
        from hyperrag.extraction.spacy_pipeline import MODEL_LABEL

        if dataset.openie_path is not None:
            log.info("extractor=spacy: the OpenIE file %s is not used", dataset.openie_path)
        path, sreport = spacy_openie(dataset.corpus.passages, extractor, Path(cache_dir) / "openie",
                                     cache_dir=cache_dir)
        dataset.openie_path = Path(path)
        dataset.extraction = _record("spacy", MODEL_LABEL, path, triples=extractor.triples,
                                     seconds=sreport.seconds, parsed=sreport.parsed)
        return dataset
    model = getattr(llm, "model", None)
    if shared_graph == "graphrag" and getattr(llm, "available", False):
        from hyperrag.llm.openie import graphrag_openie

        assert llm is not None
        path, report = graphrag_openie(dataset, llm, Path(cache_dir) / "openie")
        log.info("shared GraphRAG-style graph with %s: %s", llm, report)
        dataset.extraction = _record("llm", model, dataset.openie_path, style="graphrag")
        return dataset
    wants_llm = dataset.openie_source == "llm" or dataset.openie_path is None
    if wants_llm and extraction == "graphrag" and dataset.openie_source == "llm":
        log.info("OpenIE left to the retriever (extraction=graphrag)")
        dataset.extraction = _record("llm", model, None, style="graphrag (the method's own)")
        return dataset
    if not wants_llm or not getattr(llm, "available", False):
        if wants_llm and dataset.openie_path is not None:
            log.info("no LLM configured: using the OpenIE file %s", dataset.openie_path)
        dataset.extraction = (_record("file", released_model(dataset.openie_path), dataset.openie_path)
                              if dataset.openie_path is not None else _record("none", None, None))
        return dataset
    from hyperrag.llm.openie import index_corpus

    path, report = index_corpus(dataset.corpus.passages, llm, Path(cache_dir) / "openie")
    log.info("OpenIE with %s: %s", llm, report)
    dataset.openie_path = Path(path)
    dataset.extraction = _record("llm", model, path)
    return dataset


def defer_to_extractor(settings: Any, extractor: ExtractorSettings | None) -> Any:
    """The method's settings with its own LLM extraction turned off under ``extractor=spacy`` (HugRAG's
    ``extraction: graphrag`` → ``none``: its graph is built from the spaCy triples like every other method's)."""
    if extractor is None or extractor.source != "spacy" or getattr(settings, "extraction", None) != "graphrag":
        return settings
    import dataclasses

    log.info("extractor=spacy: the method's extraction=graphrag is off (its graph is the spaCy extraction)")
    return dataclasses.replace(settings, extraction="none")


def prepare_dataset(dataset: Dataset, llm: LanguageModel | None, cache_dir: str | Path,
                    index_dir: str | Path | None = None,
                    extraction: str | None = None, shared_graph: str | None = None,
                    extractor: ExtractorSettings | None = None, uses_triples: bool = True,
                    own_extraction: dict[str, Any] | None = None) -> Dataset:
    """With ``index_dir``: the dataset over that index's passages (in index order; no OpenIE needed — the
    index holds its graph); for a method that reads no triples (``uses_triples`` false: dense, BM25, LinearRAG's
    own spaCy index) the dataset as is, no extraction, recorded as ``own_extraction`` (the method's
    :meth:`~hyperrag.retrievers.base.Retriever.own_extraction`; default: ``source`` ``none``); otherwise
    :func:`resolve_openie` (``extraction``: the method's settings' ``extraction``, HugRAG's; ``extractor``:
    ``hydra_configs/extractor/``)."""
    if index_dir:
        from hyperrag.index.passages import dataset_for_index

        out = dataset_for_index(dataset, index_dir)
        out.extraction = _record("index", None, index_dir)
        return out
    if not uses_triples:  # e.g. llm=oracle / local with method=bm25: no 6,119 OpenIE calls it would never read
        from hyperrag.retrievers.base import Retriever

        dataset.extraction = dict(own_extraction if own_extraction is not None else Retriever.own_extraction())
        return dataset
    return resolve_openie(dataset, llm, cache_dir, extraction, shared_graph, extractor)


def retriever_class(settings: Any) -> type[Retriever]:
    """The retriever class a method's settings name (``settings.retriever``: a class or its dotted path)."""
    from hydra.utils import get_class

    target = settings.retriever
    return target if isinstance(target, type) else get_class(target)


def build_retriever(settings: Any, encoder: Encoder | None, llm: LanguageModel | None,
                    index_dir: str | Path | None = None, device: str = "auto") -> Retriever:
    """The retriever a method's settings object names (``settings.retriever``: a class or its dotted path),
    built with the run's encoder, LLM and device, over ``index_dir`` when given.

    Raises :class:`InputError` when the method cannot retrieve over an index directory.
    """
    from hyperrag.retrievers.base import require_index_dir_support

    cls = retriever_class(settings)
    if index_dir:
        require_index_dir_support(cls)
    return cls(settings, encoder=encoder, llm=llm, device=device,
               index_dir=str(index_dir) if index_dir else None)
