"""Dataset preparation shared by entry points: where a dataset's OpenIE triples come from, or which index
directory it is retrieved over; and building the configured retriever."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.data.types import Dataset

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel
    from hyperrag.retrievers.base import Retriever

log = logging.getLogger(__name__)


def resolve_openie(dataset: Dataset, llm: LanguageModel | None, cache_dir: str | Path,
                   extraction: str | None = None, shared_graph: str | None = None) -> Dataset:
    """Point ``dataset.openie_path`` at the triples to build the graph from.

    * ``shared_graph == "graphrag"`` (HugRAG's tables: "a unified root knowledge graph", its Appendix F.3 and
      B.1): every method's graph is the GraphRAG-style extraction (Fig 8) of the corpus with the configured LLM,
      one cached extraction for all of them; a passage the LLM cannot extract keeps the dataset's record; without
      an LLM, the dataset's file;

    * ``openie_source == "llm"`` or no OpenIE file: extract with the LLM when one is available (resumable,
      cached under ``cache_dir/openie`` — a finished extraction is reused with zero requests);
    * otherwise, or without an LLM, the dataset's own file is used as is;
    * ``extraction == "tri_graph"`` (LinearRAG): the method builds its own LLM-free index; no OpenIE;
    * ``extraction == "graphrag"`` (the method's ``retriever.extraction``, HugRAG): the retriever runs its own
      GraphRAG-style extraction on ``openie_source == "llm"`` datasets, so the HippoRAG-style OpenIE is skipped.
    """
    if shared_graph == "graphrag" and getattr(llm, "available", False):
        from hyperrag.llm.openie import graphrag_openie

        assert llm is not None
        _, report = graphrag_openie(dataset, llm, Path(cache_dir) / "openie")
        log.info("shared GraphRAG-style graph with %s: %s", llm, report)
        return dataset
    if extraction == "tri_graph":  # LinearRAG: the method's own spaCy Tri-Graph, no triples
        return dataset
    wants_llm = dataset.openie_source == "llm" or dataset.openie_path is None
    if wants_llm and extraction == "graphrag" and dataset.openie_source == "llm":
        log.info("OpenIE left to the retriever (extraction=graphrag)")
        return dataset
    if not wants_llm or not getattr(llm, "available", False):
        if wants_llm and dataset.openie_path is not None:
            log.info("no LLM configured: using the OpenIE file %s", dataset.openie_path)
        return dataset
    from hyperrag.llm.openie import index_corpus

    path, report = index_corpus(dataset.corpus.passages, llm, Path(cache_dir) / "openie")
    log.info("OpenIE with %s: %s", llm, report)
    dataset.openie_path = Path(path)
    return dataset


def prepare_dataset(dataset: Dataset, llm: LanguageModel | None, cache_dir: str | Path,
                    index_dir: str | Path | None = None,
                    extraction: str | None = None, shared_graph: str | None = None) -> Dataset:
    """With ``index_dir``: the dataset over that index's passages (in index order; no OpenIE needed — the
    index holds its graph); otherwise :func:`resolve_openie` (``extraction``: the method's
    settings' ``extraction``, HugRAG's)."""
    if index_dir:
        from hyperrag.index.passages import dataset_for_index

        return dataset_for_index(dataset, index_dir)
    return resolve_openie(dataset, llm, cache_dir, extraction, shared_graph)


def build_retriever(settings: Any, encoder: Encoder | None, llm: LanguageModel | None,
                    index_dir: str | Path | None = None, device: str = "auto") -> Retriever:
    """The retriever a method's settings object names (``settings.retriever``: a class or its dotted path),
    built with the run's encoder, LLM and device, over ``index_dir`` when given.

    Raises :class:`InputError` when the method cannot retrieve over an index directory.
    """
    from hydra.utils import get_class

    from hyperrag.retrievers.base import require_index_dir_support

    target = settings.retriever
    cls = target if isinstance(target, type) else get_class(target)
    if index_dir:
        require_index_dir_support(cls)
    return cls(settings, encoder=encoder, llm=llm, device=device,
               index_dir=str(index_dir) if index_dir else None)
