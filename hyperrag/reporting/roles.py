"""The extraction role of a run: where the triples its graph was built from came from — a released file (and the
model that wrote it), an LLM, or a library stand-in (spaCy) — as a model id a report prints beside the others.

New runs record it (``metrics.json``'s ``extraction`` = ``{"source": "file" | "llm" | "spacy" | "none", "model",
"path"}``); for older runs it is inferred when the run is read (:func:`infer_extraction`: the dataset's released
OpenIE file by its name, else the run's LLM) and kept with the report's values.
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

#: methods whose index is a graph built from extracted triples
GRAPH_METHODS = frozenset({"hipporag2", "catrag", "hugrag", "lightrag", "cdfrag"})
_SOURCES = {"file": "released file", "llm": "LLM", "spacy": "library stand-in", "index": "index",
            "none": "no extraction"}


def released_model(path: str | Path) -> str | None:
    """The model a released OpenIE file names: ``openie_results_ner_gpt-3.5-turbo-1106.json`` →
    ``gpt-3.5-turbo-1106`` (HippoRAG 2's release), ``openie_<model>.json`` → ``<model>``."""
    name = Path(path).name.removesuffix(".json")
    for prefix in ("openie_results_ner_", "openie_"):
        if name.startswith(prefix):
            return name[len(prefix):] or None
    return None


def infer_extraction(method: str, config: dict[str, Any], llm: str | None) -> dict[str, Any] | None:
    """Where a run's triples came from when it did not record it (``config``: the flattened config; ``llm``: the
    retrieval LLM's model id); ``None`` for a method without a graph."""
    if method not in GRAPH_METHODS:
        return None
    if str(config.get("method.retriever.extraction", "")) == "graphrag":  # HugRAG's own LLM extraction
        return {"source": "llm", "model": llm or "none", "path": None, "inferred": True}
    openie = config.get("data.openie")
    if isinstance(openie, str) and openie.endswith(".json"):
        return {"source": "file", "model": released_model(openie), "path": openie, "inferred": True}
    if openie is not None and str(openie) != "auto":
        return {"source": "llm", "model": llm or "none", "path": None, "inferred": True}
    folder = config.get("data.dir")
    if folder:
        name = config.get("data.name")
        found = sorted(glob.glob(str(Path(str(folder)) / "openie_*.json"))
                       + (glob.glob(str(Path(str(folder)) / str(name) / "openie_*.json")) if name else []))
        if found:
            return {"source": "file", "model": released_model(found[0]), "path": found[0], "inferred": True}
    return {"source": "llm", "model": llm or "none", "path": None, "inferred": True}


def extraction_id(extraction: dict[str, Any]) -> str:
    """The extraction role's text: ``gpt-3.5-turbo-1106 (released file openie_results_ner_gpt-3.5-turbo-1106.json)``,
    ``Qwen/... (LLM)``, ``en_core_web_sm 3.8.0 (library stand-in)``; ``(inferred)`` when the run did not record it."""
    source = str(extraction.get("source") or "?")
    if source == "none":  # a passage-only method: no triples, so no extraction model to name or to compare
        return f"none ({_SOURCES['none']})"
    model = extraction.get("model") or "unknown model"
    where = _SOURCES.get(source, source)
    if source == "file" and extraction.get("path"):
        where += f" {Path(str(extraction['path'])).name}"
    return f"{model} ({where}{', inferred' if extraction.get('inferred') else ''})"


def extraction_model(extraction: dict[str, Any]) -> str | None:
    """The model id the extraction role is compared by with the paper's (``None``: no extraction)."""
    if str(extraction.get("source")) == "none":
        return None
    return str(extraction.get("model") or "unknown")
