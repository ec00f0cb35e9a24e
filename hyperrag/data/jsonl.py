"""Readers for the generic JSONL formats, with validation that names file, line and field.

Corpus lines: ``{"id": str, "title": str (optional), "text": str}``.
Query lines: ``{"id": str, "question": str, "answers": [str] (optional), "gold_ids": [str] (optional)}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hyperrag.data.types import Corpus, Passage, Query
from hyperrag.errors import InputError

GOLD_ID_FIELDS = ("gold_ids", "gold_passage_ids", "supporting_ids")


def encodable(text: str) -> bool:
    """False for strings holding unpaired UTF-16 surrogates (JSON ``"\\ud800"``): no encoder can take them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_json_text(text: str, *, path: Path, line: int | None = None) -> Any:
    """``json.loads`` with every failure (syntax, absurd nesting, oversized numbers) as an :class:`InputError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        where = line if line is not None else err.lineno
        raise InputError(f"invalid JSON: {err.msg} (column {err.colno})", path=path, line=where) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=path, line=line) from None
    except ValueError as err:  # e.g. an integer with more digits than Python converts
        raise InputError(f"invalid JSON: {str(err).splitlines()[0][:120]}", path=path, line=line) from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; raise :class:`InputError` on bad lines."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")  # a BOM may open the file
            except UnicodeDecodeError as err:
                raise InputError(f"not valid UTF-8 (byte {err.start})", path=path, line=line_no) from None
            if not line.strip():
                continue
            obj = parse_json_text(line, path=path, line=line_no)
            if not isinstance(obj, dict):
                raise InputError(f"each line must be a JSON object, got {type(obj).__name__}", path=path,
                                 line=line_no)
            yield line_no, obj


def require_str(obj: dict[str, Any], key: str, *, path: Path, line: int, allow_empty: bool = False,
                default: str | None = None) -> str:
    """Fetch a string field; ints are accepted for ``id`` fields and turned into strings."""
    if key not in obj:
        if default is not None:
            return default
        raise InputError("missing required field", path=path, line=line, field=key)
    value = obj[key]
    if key.endswith("id") and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise InputError(f"expected a string, got {type(value).__name__}", path=path, line=line, field=key)
    if not encodable(value):
        raise InputError("contains an unpaired surrogate escape (not valid Unicode text)", path=path, line=line,
                         field=key)
    if not allow_empty and not value.strip():
        raise InputError("must not be empty", path=path, line=line, field=key)
    return value


def require_str_list(obj: dict[str, Any], key: str, *, path: Path, line: int) -> tuple[str, ...]:
    value = obj.get(key, [])
    if isinstance(value, str):
        raise InputError("expected a list of strings, got a string", path=path, line=line, field=key)
    if not isinstance(value, list) or not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value):
        raise InputError("expected a list of strings", path=path, line=line, field=key)
    if not all(encodable(v) for v in value if isinstance(v, str)):
        raise InputError("contains an unpaired surrogate escape (not valid Unicode text)", path=path, line=line,
                         field=key)
    return tuple(str(v) for v in value)


def read_jsonl_corpus(path: str | Path) -> Corpus:
    path = Path(path)
    passages: list[Passage] = []
    first_line: dict[str, int] = {}
    for line_no, obj in iter_jsonl(path):
        pid = require_str(obj, "id", path=path, line=line_no)
        if pid in first_line:
            raise InputError(f"duplicate id {pid!r} (first seen on line {first_line[pid]})",
                             path=path, line=line_no, field="id")
        first_line[pid] = line_no
        title = require_str(obj, "title", path=path, line=line_no, allow_empty=True, default="")
        text = require_str(obj, "text", path=path, line=line_no)
        passages.append(Passage(pid, title, text))
    if not passages:
        raise InputError("corpus is empty", path=path)
    return Corpus(passages, source=str(path))


def read_jsonl_queries(path: str | Path, corpus: Corpus | None = None) -> list[Query]:
    """Read a query file; gold ids are checked against ``corpus`` when given."""
    path = Path(path)
    queries: list[Query] = []
    seen: dict[str, int] = {}
    for line_no, obj in iter_jsonl(path):
        qid = require_str(obj, "id", path=path, line=line_no)
        if qid in seen:
            raise InputError(f"duplicate id {qid!r} (first seen on line {seen[qid]})",
                             path=path, line=line_no, field="id")
        seen[qid] = line_no
        question = require_str(obj, "question", path=path, line=line_no)
        answers = require_str_list(obj, "answers", path=path, line=line_no)
        gold_key = next((k for k in GOLD_ID_FIELDS if k in obj), GOLD_ID_FIELDS[0])
        gold = require_str_list(obj, gold_key, path=path, line=line_no)
        if corpus is not None:
            unknown = [g for g in gold if g not in corpus]
            if unknown:
                raise InputError(f"unknown passage id(s) {unknown[:3]} not in corpus {corpus.source}",
                                 path=path, line=line_no, field=gold_key)
        queries.append(Query(qid, question, answers, gold))
    if not queries:
        raise InputError("query file is empty", path=path)
    return queries
