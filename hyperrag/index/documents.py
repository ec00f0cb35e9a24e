"""Raw documents into a knowledge-graph index directory: chunk, extract triples with the LLM, embed, build or insert.

Shared by the Python API (:mod:`hyperrag.api`) and ``python -m hyperrag.index build|insert`` without ``--openie``.
Triples of each passage come from, in order: the record itself (``triples``), spaCy's LLM-free stand-in under
``extractor=spacy`` (:mod:`hyperrag.extraction.spacy_openie`, parses cached), the configured LLM (HippoRAG-style
OpenIE through :func:`hyperrag.llm.openie.index_corpus`: resumable, every reply cached, a finished extraction
reused with zero requests), or nowhere — without an LLM the passage enters the graph with no triples, and the
skipped extractions are counted (``openie_skipped``) and warned about, never silent. The combined triples are
written as a HippoRAG-format OpenIE file (keyed by its content under ``<cache_dir>/openie``) and the index is
built or updated from it as :mod:`hyperrag.index.kg_index` / :mod:`hyperrag.index.update` do.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.data.types import Corpus, Passage
from hyperrag.index.chunking import ChunkSettings, Document, Triple, chunk_documents, chunking_record
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.extraction.settings import ExtractorSettings
    from hyperrag.graph.incremental import UpdateResult
    from hyperrag.index.kg_index import GraphSettings, KGIndex
    from hyperrag.protocols import Encoder, LanguageModel

log = logging.getLogger(__name__)


def extract_triples(passages: Sequence[Passage], given: Sequence[list[Triple] | None], llm: LanguageModel | None,
                    cache_dir: str | Path, progress: bool = True, extractor: ExtractorSettings | None = None,
                    ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """HippoRAG-format OpenIE docs for ``passages`` (``docs[i]`` ↔ ``passages[i]``) and what was done.

    Args:
        given: per passage, the triples its record brought, or None (extract it).
        llm: extracts the others when available.
        extractor: ``extractor=spacy`` settings: spaCy extracts the others (no LLM needed); ``None`` / ``llm``: the LLM.
        cache_dir: root of the OpenIE checkpoints (``<cache_dir>/openie``).

    Returns:
        ``(docs, report)``; ``report``: ``given``, ``extracted``, ``failed`` (the LLM gave no valid reply: no
        triples, retried on the next run) and ``openie_skipped`` (no LLM) passage counts.
    """
    from hyperrag.llm.tasks.base import passage_string

    docs: list[dict[str, Any]] = []
    for i, (p, t) in enumerate(zip(passages, given)):
        triples = [list(x) for x in t] if t is not None else []
        entities = list(dict.fromkeys(x for s, _, o in triples for x in (s, o)))
        docs.append({"idx": i, "passage": passage_string(p), "extracted_entities": entities,
                     "extracted_triples": triples})
    todo = [i for i, t in enumerate(given) if t is None]
    report = {"given": len(passages) - len(todo), "extracted": 0, "failed": 0, "openie_skipped": 0}
    if not todo:
        return docs, report
    if extractor is not None and extractor.source == "spacy":
        from hyperrag.extraction.spacy_openie import spacy_openie

        path, _ = spacy_openie([passages[i] for i in todo], extractor, Path(cache_dir) / "openie",
                               cache_dir=cache_dir, progress=progress)
        extracted = json.loads(Path(path).read_text(encoding="utf-8"))["docs"]
        for j, i in enumerate(todo):
            docs[i].update({k: extracted[j][k] for k in ("extracted_entities", "extracted_triples", "sentences")})
        report["extracted"] = len(todo)
        return docs, report
    if not getattr(llm, "available", False):
        report["openie_skipped"] = len(todo)
        log.warning("no LLM configured: %d passage(s) enter the graph without triples (OpenIE skipped); configure "
                    "llm=local|vllm|openai_compatible, extractor=spacy (LLM-free), or give records with their "
                    "'triples'", len(todo))
        return docs, report
    from hyperrag.llm.openie import index_corpus

    path, run = index_corpus([passages[i] for i in todo], llm, Path(cache_dir) / "openie", progress=progress)
    extracted = json.loads(Path(path).read_text(encoding="utf-8"))["docs"]
    for j, i in enumerate(todo):
        docs[i]["extracted_entities"] = extracted[j]["extracted_entities"]
        docs[i]["extracted_triples"] = extracted[j]["extracted_triples"]
    report["failed"] = len(run.failed)
    report["extracted"] = len(todo) - len(run.failed)
    return docs, report


def _model(llm: LanguageModel | None, extractor: ExtractorSettings | None) -> str | None:
    """The extraction's model label: spaCy's under ``extractor=spacy``, else the LLM's."""
    if extractor is not None and extractor.source == "spacy":
        from hyperrag.extraction.spacy_pipeline import MODEL_LABEL

        return MODEL_LABEL
    return getattr(llm, "model", None)


def write_triples(docs: list[dict[str, Any]], cache_dir: str | Path, model: str | None) -> Path:
    """The docs as a HippoRAG-format OpenIE file under ``<cache_dir>/openie``, named by their content."""
    from hyperrag.llm.openie import write_openie

    path = Path(cache_dir) / "openie" / f"documents-{stable_digest(docs)[:16]}.json"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_openie(path, docs, model=model)
    return path


def passages_of(docs: Sequence[Document], chunking: ChunkSettings | None
                ) -> tuple[list[Passage], list[list[Triple] | None]]:
    """Passages and given triples of ``docs``: chunked, or (``chunking`` None) one passage per document."""
    if chunking is not None:
        return chunk_documents(docs, chunking)
    return ([Passage(d.id, d.title, d.text) for d in docs],
            [list(d.triples) if d.triples is not None else None for d in docs])


def build_from_documents(index_dir: str | Path, docs: Sequence[Document], chunking: ChunkSettings | None,
                         encoder: Encoder, graph: GraphSettings, llm: LanguageModel | None, cache_dir: str | Path,
                         progress: bool = True, replace: bool = False, extractor: ExtractorSettings | None = None,
                         ) -> tuple[KGIndex, dict[str, int]]:
    """Chunk ``docs`` (``chunking`` None: one passage per document), extract their triples, and build the
    knowledge-graph index into ``index_dir`` (an index of the same inputs already there is loaded; another one is
    refused, or with ``replace`` replaced: see :func:`~hyperrag.index.kg_index.build_kg_directory`). Returns the
    index and the extraction report."""
    from hyperrag.index.kg_index import build_kg_directory

    passages, given = passages_of(docs, chunking)
    oie, report = extract_triples(passages, given, llm, cache_dir, progress, extractor)
    path = write_triples(oie, cache_dir, _model(llm, extractor))
    corpus = Corpus(passages, source=f"{len(docs)} documents")
    extra: dict[str, Any] = {"extraction": report}
    if chunking is not None:
        extra["chunking"] = chunking_record(chunking)
    kg = build_kg_directory(index_dir, corpus, path, encoder, graph, extra=extra, replace=replace)
    return kg, report


def insert_from_documents(index_dir: str | Path, docs: Sequence[Document], chunking: ChunkSettings | None,
                          encoder: Encoder, llm: LanguageModel | None, cache_dir: str | Path, source: str = "documents",
                          progress: bool = True, extractor: ExtractorSettings | None = None,
                          ) -> tuple[UpdateResult, dict[str, int]]:
    """Chunk ``docs`` (``chunking`` None: each document is one passage), extract their triples and insert them into
    the index at ``index_dir``. Returns the update and the extraction report."""
    from hyperrag.data.openie import read_openie
    from hyperrag.index.update import insert_documents

    passages, given = passages_of(docs, chunking)
    oie, report = extract_triples(passages, given, llm, cache_dir, progress, extractor)
    corpus = Corpus(passages, source=source)
    records = read_openie(write_triples(oie, cache_dir, _model(llm, extractor)), corpus)
    result = insert_documents(index_dir, corpus, records, encoder, note={"extraction": report})
    return result, report


def index_chunking(manifest: dict[str, Any]) -> ChunkSettings | None:
    """The chunking an index's passages were made with (its manifest), or None (built from ready passages)."""
    from hyperrag.config.validation import validate

    rec = manifest.get("chunking")
    if not isinstance(rec, dict):
        return None
    return validate(ChunkSettings, {k: rec[k] for k in ("tokenizer", "chunk_size", "overlap")}, "chunking")


__all__ = ["build_from_documents", "extract_triples", "index_chunking", "insert_from_documents", "passages_of",
           "write_triples"]
