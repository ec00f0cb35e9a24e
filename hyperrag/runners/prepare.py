"""Dataset preparation shared by entry points: where a dataset's OpenIE triples come from."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hyperrag.data.types import Dataset

log = logging.getLogger(__name__)


def resolve_openie(dataset: Dataset, llm: Any, cache_dir: str | Path) -> Dataset:
    """Point ``dataset.openie_path`` at the triples to build the graph from.

    * ``openie_source == "llm"`` or no OpenIE file: extract with the LLM when one is available (resumable,
      cached under ``cache_dir/openie`` — a finished extraction is reused with zero requests);
    * otherwise, or without an LLM, the dataset's own file is used as is.
    """
    wants_llm = dataset.openie_source == "llm" or dataset.openie_path is None
    if not wants_llm or not getattr(llm, "available", False):
        if wants_llm and dataset.openie_path is not None:
            log.info("no LLM configured: using the OpenIE file %s", dataset.openie_path)
        return dataset
    from hyperrag.llm.openie import index_corpus

    path, report = index_corpus(dataset.corpus.passages, llm, Path(cache_dir) / "openie")
    log.info("OpenIE with %s: %s", llm, report)
    dataset.openie_path = Path(path)
    return dataset
