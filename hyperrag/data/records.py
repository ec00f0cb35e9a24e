"""Validated access to the records of benchmark files, in JSON-list or JSONL form, with errors that name
the file, the record (JSON list, 0-based) or line (JSONL, 1-based), and the field.

Shared by the benchmark readers (HippoRAG 2 release, HotpotQA, HoVer, multiple choice); the plain JSONL
and MuSiQue readers keep their own helpers.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperrag.data.jsonl import encodable, iter_jsonl
from hyperrag.data.musique import load_json
from hyperrag.data.types import Corpus, Passage
from hyperrag.errors import InputError


@dataclass(frozen=True)
class Where:
    """Where a record sits: its file and either its JSONL line or its JSON-list position."""

    path: Path
    line: int | None = None
    record: int | None = None

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(message, path=self.path, line=self.line, record=self.record, field=field)


def looks_like_json_list(path: Path) -> bool:
    """True when the file's first non-blank character (after a BOM) opens a JSON list; else it is JSONL."""
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"[")


def iter_records(path: str | Path) -> Iterator[tuple[Where, dict[str, Any]]]:
    """Yield ``(where, record)`` for every record of a JSON-list file or a JSONL file (sniffed from the
    content, not the suffix: MedMCQA's ``train.json`` is JSONL). Non-object records raise."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    if not looks_like_json_list(path):
        for line_no, obj in iter_jsonl(path):
            yield Where(path, line=line_no), obj
        return
    records = load_json(path)
    if not isinstance(records, list):  # "[" opened something that did not parse as a list
        raise InputError("expected a JSON list of records", path=path)
    for i, rec in enumerate(records):
        where = Where(path, record=i)
        if not isinstance(rec, dict):
            raise where.error(f"expected a JSON object, got {type(rec).__name__}")
        yield where, rec


def check_text(value: Any, where: Where, field: str, *, allow_empty: bool = False) -> str:
    """``value`` as a string field: a string, valid Unicode, non-blank unless ``allow_empty``."""
    if not isinstance(value, str):
        raise where.error(f"expected a string, got {type(value).__name__}", field)
    if not encodable(value):
        raise where.error("contains an unpaired surrogate escape (not valid Unicode text)", field)
    if not allow_empty and not value.strip():
        raise where.error("must not be empty", field)
    return value


def get_text(rec: dict[str, Any], key: str, where: Where, *, allow_empty: bool = False) -> str:
    """A required string field."""
    if key not in rec:
        raise where.error("missing required field", key)
    return check_text(rec[key], where, key, allow_empty=allow_empty)


def get_id(rec: dict[str, Any], keys: tuple[str, ...], where: Where, default: str) -> str:
    """The first of ``keys`` present (a string or an integer), else ``default`` (e.g. the record position)."""
    key = next((k for k in keys if k in rec), None)
    if key is None:
        return default
    value = rec[key]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return check_text(value, where, key)


def get_list(rec: dict[str, Any], key: str, where: Where, *, required: bool = False) -> list[Any]:
    """A list field; absent or ``null`` gives ``[]`` unless ``required``."""
    value = rec.get(key)
    if value is None:
        if required:
            raise where.error("missing required field", key)
        return []
    if not isinstance(value, list):
        raise where.error(f"expected a JSON list, got {type(value).__name__}", key)
    return value


def answer_strings(value: Any, where: Where, field: str) -> list[str]:
    """An answer field as strings: a string, a number or a list of them (``null`` → none)."""
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise where.error("expected a string or a list of strings", field)
        text = check_text(str(item), where, field, allow_empty=True).strip()
        if text:
            out.append(text)
    return out


def title_key(title: str) -> str:
    """Titles compared across files: NFC Unicode (wiki dumps differ in NFC/NFD) and collapsed whitespace."""
    return " ".join(unicodedata.normalize("NFC", title).split())


def text_key(text: str) -> str:
    """Passage texts compared across files without their whitespace: benchmark files join a paragraph's
    sentences with ``""`` (HotpotQA, whose sentences carry their own leading space) or ``" "`` (2Wiki)."""
    return "".join(unicodedata.normalize("NFC", text).split())


def join_sentences(sentences: list[str]) -> str:
    """A paragraph from its sentences: a space is added only where neither side already has one."""
    text = ""
    for s in sentences:
        if text and s and not text[-1].isspace() and not s[0].isspace():
            text += " "
        text += s
    return text.strip()


def read_title_text_corpus(path: str | Path, *, require_title: bool = False) -> Corpus:
    """A corpus file of ``{"id" (optional), "title", "text"}`` records, as a JSON list or JSONL.

    A passage without ``id`` gets its position among the passages (``"0"``, ``"1"``, ...), as the MuSiQue
    and HippoRAG corpus files imply.
    """
    path = Path(path)
    passages: list[Passage] = []
    first: dict[str, Where] = {}
    for where, rec in iter_records(path):
        pid = get_id(rec, ("id",), where, default=str(len(passages)))
        if pid in first:
            seen = first[pid]
            at = f"line {seen.line}" if seen.line is not None else f"record {seen.record}"
            raise where.error(f"duplicate id {pid!r} (first seen on {at})", "id")
        first[pid] = where
        if require_title:
            title = get_text(rec, "title", where)
        else:
            raw = rec.get("title")
            title = "" if raw is None else check_text(raw, where, "title", allow_empty=True)
        passages.append(Passage(pid, title, get_text(rec, "text", where)))
    if not passages:
        raise InputError("corpus is empty", path=path)
    return Corpus(passages, source=str(path))
