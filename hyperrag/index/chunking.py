"""Raw documents into passages: records normalised, long texts split by ``semchunk`` (token-bounded chunks cut at
the most meaningful boundary — paragraphs, then sentences, then clauses, then words).

A document is a string (its id is a digest of its text, so indexing the same text twice is a no-op) or a record
``{"id"?, "title"?, "text", "triples"?}``; a JSONL / JSON list file of such records is read the same way. A
document of one chunk keeps its id; a longer one becomes passages ``<id>#0``, ``<id>#1``, ... with its title.
A record that brings its own OpenIE ``triples`` (``[[subject, relation, object], ...]``, HippoRAG's
``extracted_triples``) is one passage: its triples describe exactly that text.

What the chunks were made with (:func:`chunking_record`: library, version, tokenizer, size, overlap) is written
into the index manifest; an insert into that index chunks the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hyperrag.config.validation import NonNegativeInt, PositiveInt, settings
from hyperrag.data.types import Passage
from hyperrag.errors import InputError
from hyperrag.utils.hashing import text_digest

Triple = tuple[str, str, str]


@settings
class ChunkSettings:
    """How documents are split (``hydra_configs/chunking/``; recorded in the index manifest).

    Attributes:
        tokenizer: what a token is: ``words`` (whitespace-separated words), or a local Hugging Face tokenizer —
            a folder or a packaged model name such as ``all-MiniLM-L6-v2`` (then chunks fit the embedder's window).
        chunk_size: tokens per chunk at most.
        overlap: tokens shared by consecutive chunks of a document (0: none).
    """

    tokenizer: str
    chunk_size: PositiveInt
    overlap: NonNegativeInt

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The character spans of ``text``'s chunks (:func:`chunk_spans`): what a reader below this layer (the
        HolisQA release reader) calls to cut text without importing the index package."""
        return chunk_spans(text, self)


@dataclass(frozen=True)
class Document:
    """One input document, normalised (``triples`` is None unless the record brought its own)."""

    id: str
    title: str
    text: str
    triples: tuple[Triple, ...] | None = None


def _triples(value: Any, where: str) -> tuple[Triple, ...]:
    if not isinstance(value, list) or not all(
            isinstance(t, (list, tuple)) and len(t) == 3 and all(isinstance(x, str) for x in t) for t in value):
        raise InputError("must be a list of [subject, relation, object] string triples", path=where,
                         field="triples")
    return tuple((s, r, o) for s, r, o in value)


def read_documents(source: str | Path | Iterable[str | Mapping[str, Any]]) -> list[Document]:
    """Documents from strings, records, or a JSONL / JSON list file of records.

    Raises:
        InputError: a record without text, with a non-string field, bad triples or a repeated id (one line
            naming the record or file line and the field).
    """
    if isinstance(source, (str, Path)) and not (isinstance(source, str) and "\n" in source) \
            and Path(source).suffix in (".jsonl", ".json"):
        return _read_file(Path(source))
    if isinstance(source, str):
        source = [source]
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(source):
        where = f"document {i}"
        if isinstance(item, str):
            doc = Document(f"doc-{text_digest(item, length=12)}", "", item)
        elif isinstance(item, Mapping):
            doc = _from_record(item, where)
        else:
            raise InputError(f"{where}: a document is a string or a record, got {type(item).__name__}")
        if doc.id in seen:
            raise InputError(f"{where}: duplicate id {doc.id!r} (first seen in document {seen[doc.id]})", field="id")
        seen[doc.id] = i
        docs.append(doc)
    if not docs:
        raise InputError("no documents given")
    return docs


def _from_record(rec: Mapping[str, Any], where: str) -> Document:
    text = rec.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{where}: needs a non-empty string 'text'", field="text")
    for key in ("id", "title"):
        if key in rec and not isinstance(rec[key], str):
            raise InputError(f"{where}: '{key}' must be a string", field=key)
    doc_id = rec.get("id") or f"doc-{text_digest(text, length=12)}"
    triples = rec.get("triples", rec.get("extracted_triples"))
    return Document(doc_id, rec.get("title") or "", text,
                    None if triples is None else _triples(triples, f"{where} ({doc_id})"))


def _read_file(path: Path) -> list[Document]:
    from hyperrag.data.jsonl import iter_jsonl
    from hyperrag.data.musique import load_json

    if not path.is_file():
        raise InputError("file not found", path=path)
    if path.suffix == ".jsonl":
        rows = [(f"{path}:{line}", obj) for line, obj in iter_jsonl(path)]
    else:
        data = load_json(path)
        if not isinstance(data, list):
            raise InputError("a JSON documents file holds a list of records", path=path)
        rows = [(f"{path} record {i + 1}", obj) for i, obj in enumerate(data)]
    docs, seen = [], set()
    for where, obj in rows:
        if not isinstance(obj, Mapping):
            raise InputError(f"{where}: a record is a JSON object")
        doc = _from_record(obj, where)
        if doc.id in seen:
            raise InputError(f"{where}: duplicate id {doc.id!r}", field="id")
        seen.add(doc.id)
        docs.append(doc)
    if not docs:
        raise InputError("no documents in the file", path=path)
    return docs


@functools.cache
def token_counter(tokenizer: str) -> Callable[[str], int] | Any:
    """``words`` → a word counter; otherwise the local Hugging Face tokenizer (what semchunk accepts)."""
    if tokenizer == "words":
        return lambda text: len(text.split())
    from transformers import AutoTokenizer

    from hyperrag.embedding.encoder import resolve_model_path

    try:
        return AutoTokenizer.from_pretrained(resolve_model_path(tokenizer))
    except OSError as err:
        raise InputError(f"tokenizer {tokenizer!r} not found locally ({str(err).splitlines()[0]})",
                         field="chunking.tokenizer") from None


def chunk_documents(docs: Sequence[Document], chunking: ChunkSettings) -> tuple[list[Passage], list[list[Triple] | None]]:
    """Passages of ``docs`` (in order) and, per passage, the triples its record brought (None: to be extracted)."""
    import semchunk

    chunker = semchunk.chunkerify(token_counter(chunking.tokenizer), chunking.chunk_size)
    passages: list[Passage] = []
    triples: list[list[Triple] | None] = []
    for doc in docs:
        if doc.triples is not None:
            passages.append(Passage(doc.id, doc.title, doc.text))
            triples.append(list(doc.triples))
            continue
        pieces = [p for p in chunker(doc.text, overlap=chunking.overlap or None) if p.strip()] or [doc.text]
        ids = [doc.id] if len(pieces) == 1 else [f"{doc.id}#{k}" for k in range(len(pieces))]
        passages.extend(Passage(pid, doc.title, text) for pid, text in zip(ids, pieces))
        triples.extend([None] * len(pieces))
    return passages, triples


def chunk_spans(text: str, chunking: ChunkSettings) -> list[tuple[int, int]]:
    """The character spans ``[start, end)`` of ``text``'s chunks, cut exactly as :func:`chunk_documents` cuts a
    document (the same semchunk chunker, size and overlap; blank chunks dropped): ``text[start:end]`` is a passage.
    A reader that must map units inside the text (sentences) to the passages holding them uses these."""
    import semchunk

    chunker = semchunk.chunkerify(token_counter(chunking.tokenizer), chunking.chunk_size)
    pieces, spans = chunker(text, offsets=True, overlap=chunking.overlap or None)
    kept = [(int(a), int(b)) for p, (a, b) in zip(pieces, spans) if p.strip()]
    return kept or [(0, len(text))]


def chunking_record(chunking: ChunkSettings) -> dict[str, Any]:
    """What the index manifest records about its chunks."""
    from importlib.metadata import version

    return {"library": "semchunk", "version": version("semchunk"), **asdict(chunking)}


def document_passages(document_id: str, passage_ids: Iterable[str]) -> list[str]:
    """The passages of a document among ``passage_ids``: the id itself, or its chunks ``<id>#<k>``."""
    chunk = re.compile(re.escape(document_id) + r"#\d+")
    return [pid for pid in passage_ids if pid == document_id or chunk.fullmatch(pid)]


__all__ = ["ChunkSettings", "Document", "chunk_documents", "chunk_spans", "chunking_record", "document_passages",
           "read_documents", "token_counter"]
