"""Property-based fuzzing of the corpus/query/MuSiQue/OpenIE readers: a valid result or an InputError, nothing else."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from hyperrag.data.jsonl import read_jsonl_corpus, read_jsonl_queries
from hyperrag.data.musique import read_musique_corpus, read_musique_queries
from hyperrag.data.openie import read_openie
from hyperrag.data.types import Corpus, Passage
from hyperrag.errors import InputError
from tests.reliability.fuzz_inputs import json_documents, jsonl_files

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
CORPUS = Corpus([Passage("a", "A", "alpha"), Passage("b", "B", "beta")], source="fixed")


def write(data: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    path = folder / name
    path.write_bytes(data)
    return path


def check_error(err: InputError, path: Path) -> None:
    text = err.one_line()
    assert "\n" not in text and str(path) in text and text.strip()


def check_corpus(data: bytes) -> None:
    path = write(data, "corpus.jsonl")
    try:
        corpus = read_jsonl_corpus(path)
    except InputError as err:
        check_error(err, path)
        return
    assert len(corpus) > 0 and len(set(corpus.ids)) == len(corpus)
    for p in corpus.passages:
        assert isinstance(p.id, str) and p.id.strip() and isinstance(p.text, str) and p.text.strip()
        p.content.encode("utf-8")  # every accepted string can be embedded / hashed


def check_queries(data: bytes) -> None:
    path = write(data, "queries.jsonl")
    for corpus in (None, CORPUS):
        try:
            queries = read_jsonl_queries(path, corpus)
        except InputError as err:
            check_error(err, path)
            continue
        assert queries and len({q.id for q in queries}) == len(queries)
        assert all(isinstance(q.question, str) and q.question.strip() for q in queries)
        if corpus is not None:
            assert all(g in corpus for q in queries for g in q.gold_ids)


def check_documents(data: bytes) -> None:
    path = write(data, "doc.json")
    for read in (read_musique_corpus, lambda p: read_musique_queries(p, CORPUS), lambda p: read_openie(p, CORPUS)):
        try:
            read(path)
        except InputError as err:
            check_error(err, path)


@FAST
@given(jsonl_files())
def test_corpus_reader_never_crashes(data):
    check_corpus(data)


@FAST
@given(jsonl_files(("id", "question", "answers", "gold_ids")))
def test_query_reader_never_crashes(data):
    check_queries(data)


@FAST
@given(json_documents())
def test_json_readers_never_crash(data):
    check_documents(data)


@pytest.mark.parametrize("data, message", [
    (b"", "corpus is empty"),
    (b"\xef\xbb\xbf" + b'{"id": "a", "text": "x"}\r\n{"id": "b", "text": "y"}\r\n', None),
    (b'{"id": "a", "text": "x"}\n\xff\n', "not valid UTF-8"),
    (b"[1, 2]\n", "each line must be a JSON object, got list"),
    (b'{"id": "a", "text": "\\ud800"}\n', "unpaired surrogate"),
    (b"[" * 100000 + b"]" * 100000 + b"\n", "nested too deeply"),
    (b'{"id": ' + b"9" * 5000 + b', "text": "x"}\n', "invalid JSON"),
    (b'{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "duplicate id 'a'"),
    (b'{"id": 1.5, "text": "x"}\n', "expected a string, got float"),
    (b'{"text": "x"}\n', "missing required field"),
])
def test_corpus_reader_examples(data, message):
    path = write(data, "corpus.jsonl")
    if message is None:
        assert read_jsonl_corpus(path).ids == ["a", "b"]
    else:
        with pytest.raises(InputError, match=message):
            read_jsonl_corpus(path)


def test_huge_passage_is_read():
    path = write(b'{"id": "a", "text": "' + b"word " * 400_000 + b'"}\n', "corpus.jsonl")
    assert len(read_jsonl_corpus(path)[0].text) == 2_000_000


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(jsonl_files())
def test_corpus_reader_never_crashes_long(data):
    check_corpus(data)
