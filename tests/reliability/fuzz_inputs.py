"""Hypothesis strategies for hostile input files (shared by the reader fuzz tests, the CLI fuzz test and the bench).

Each strategy yields the raw bytes of a file: JSONL with mixed good and bad lines (wrong types,
missing or duplicate ids, non-object lines, invalid UTF-8, lone surrogate escapes, BOM, CRLF, huge
passages, absurd nesting, oversized numbers), or a JSON document for the MuSiQue/OpenIE readers.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                         st.text(max_size=20))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                 st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                           max_leaves=8)
IDS = st.one_of(st.sampled_from(["a", "b", "p01", "p02", "q1", "", " "]), st.integers(0, 3), st.text(max_size=4),
                JSON_VALUES)
TEXTS = st.one_of(st.text(max_size=40), st.sampled_from(["", "   ", "x" * 200_000, "Caf\u00e9 \u2603", "\ud800"]),
                  JSON_VALUES)


def _record(keys: tuple[str, ...]) -> st.SearchStrategy[dict]:
    """An object with some of ``keys`` (any of them possibly of a wrong type) and maybe an extra key."""
    values = {"id": IDS, "title": TEXTS, "text": TEXTS, "question": TEXTS,
              "answers": st.one_of(st.lists(TEXTS, max_size=3), TEXTS),
              "gold_ids": st.one_of(st.lists(IDS, max_size=3), IDS)}
    return st.fixed_dictionaries({}, optional={k: values[k] for k in keys}).flatmap(
        lambda d: st.just(d) | st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=2).map(lambda e: {**e, **d}))


def _encode_line(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=True).encode("utf-8")  # ensure_ascii keeps lone surrogates as \\ud800


RAW_LINES = st.one_of(
    st.sampled_from([b"", b"   ", b"{", b"[1, 2]", b"null", b'"just a string"', b"\xff\xfe\x00bad", b"{'id': 1}",
                     b'{"id": "a", "text": "\xe9t\xe9"}', b"[" * 5000 + b"]" * 5000, b'{"id": ' + b"9" * 5000 + b"}",
                     b'{"id": "a", "text": NaN}', b'{"id": "\\ud800", "text": "x"}']),
    st.binary(max_size=30),
    JSON_VALUES.map(_encode_line),
)


@st.composite
def jsonl_files(draw: st.DrawFn, keys: tuple[str, ...] = ("id", "title", "text")) -> bytes:
    """A JSONL file: mostly records with ``keys``, some raw bad lines, random line endings, maybe a BOM."""
    lines = draw(st.lists(st.one_of(_record(keys).map(_encode_line), _record(keys).map(_encode_line), RAW_LINES),
                          max_size=6))
    newline = draw(st.sampled_from([b"\n", b"\r\n"]))
    body = newline.join(lines) + draw(st.sampled_from([b"", newline]))
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + body


@st.composite
def json_documents(draw: st.DrawFn) -> bytes:
    """A whole-file JSON document for the MuSiQue and OpenIE readers (lists of loosely shaped records)."""
    record = st.fixed_dictionaries({}, optional={
        "id": IDS, "title": TEXTS, "text": TEXTS, "question": TEXTS, "answer": TEXTS,
        "paragraphs": st.lists(st.fixed_dictionaries({}, optional={"title": TEXTS, "paragraph_text": TEXTS,
                                                                    "is_supporting": st.booleans()}), max_size=2),
        "idx": st.integers(-1, 4), "passage": TEXTS,
        "extracted_entities": st.one_of(st.lists(TEXTS, max_size=3), TEXTS),
        "extracted_triples": st.one_of(st.lists(st.lists(TEXTS, max_size=4), max_size=3), TEXTS)})
    doc = draw(st.one_of(st.lists(record, max_size=4), st.fixed_dictionaries({"docs": st.lists(record, max_size=4)}),
                         JSON_VALUES))
    raw = json.dumps(doc, ensure_ascii=True).encode()
    return draw(st.sampled_from([raw, b"\xef\xbb\xbf" + raw, raw[: len(raw) // 2], b"", b"\xff" + raw]))
