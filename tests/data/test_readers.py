import json
from pathlib import Path

import pytest

from hyperrag.data import (
    jsonl_dataset,
    musique_dataset,
    read_jsonl_corpus,
    read_jsonl_queries,
    read_openie,
    sample_dataset,
)
from hyperrag.errors import InputError
from tests.conftest import MUSIQUE_DIR, requires_musique


def write_lines(path: Path, lines: list) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_sample_dataset_is_consistent():
    ds = sample_dataset()
    assert len(ds.corpus) == 12 and len(ds.queries) == 6
    for q in ds.queries:
        assert len(q.gold_ids) >= 2 and all(g in ds.corpus for g in q.gold_ids)
    openie = read_openie(ds.openie_path, ds.corpus)
    assert all(openie.triples[i] for i in range(len(ds.corpus)))
    assert openie.skipped_triples == 0


def test_corpus_and_queries_roundtrip(tmp_path):
    corpus = read_jsonl_corpus(write_lines(tmp_path / "c.jsonl", [
        {"id": "a", "title": "A", "text": "alpha"}, "", {"id": 7, "text": "seven"}]))
    assert corpus.ids == ["a", "7"] and corpus[1].title == ""
    queries = read_jsonl_queries(write_lines(tmp_path / "q.jsonl", [
        {"id": "q", "question": "?", "answers": ["x"], "gold_ids": ["a", "7"]}]), corpus)
    assert queries[0].gold_ids == ("a", "7") and queries[0].answers == ("x",)


@pytest.mark.parametrize("lines, expected", [
    ([], "corpus is empty"),
    ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], ":2: field 'id': duplicate id 'a' (first seen on line 1)"),
    ([{"id": "a"}], ":1: field 'text': missing required field"),
    ([{"id": "a", "text": 5}], ":1: field 'text': expected a string, got int"),
    ([{"id": "a", "text": "  "}], ":1: field 'text': must not be empty"),
    (["{not json"], ":1: invalid JSON"),
    (["[1, 2]"], ":1: each line must be a JSON object"),
])
def test_corpus_errors_name_file_line_field(tmp_path, lines, expected):
    path = write_lines(tmp_path / "c.jsonl", lines) if lines else tmp_path / "c.jsonl"
    if not lines:
        path.write_text("")
    with pytest.raises(InputError) as err:
        read_jsonl_corpus(path)
    assert str(path) in str(err.value) and expected in str(err.value)


def test_non_utf8_reports_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"c.jsonl:2: not valid UTF-8"):
        read_jsonl_corpus(path)


def test_queries_with_unknown_gold_ids(tmp_path):
    corpus = read_jsonl_corpus(write_lines(tmp_path / "c.jsonl", [{"id": "a", "text": "x"}]))
    path = write_lines(tmp_path / "q.jsonl", [{"id": "q1", "question": "?", "gold_ids": ["a", "zz"]}])
    with pytest.raises(InputError, match=r"q.jsonl:1: field 'gold_ids': unknown passage id\(s\) \['zz'\]"):
        read_jsonl_queries(path, corpus)


def test_queries_mistyped_answers(tmp_path):
    path = write_lines(tmp_path / "q.jsonl", [{"id": "q1", "question": "?", "answers": "x"}])
    with pytest.raises(InputError, match=r"field 'answers': expected a list of strings"):
        read_jsonl_queries(path)


def test_jsonl_dataset_missing_openie(tmp_path):
    c = write_lines(tmp_path / "c.jsonl", [{"id": "a", "text": "x"}])
    q = write_lines(tmp_path / "q.jsonl", [{"id": "q", "question": "?"}])
    with pytest.raises(InputError, match="OpenIE file not found"):
        jsonl_dataset(c, q, tmp_path / "nope.json")


def test_openie_mismatch_and_malformed(tmp_path):
    ds = sample_dataset()
    data = json.loads(Path(ds.openie_path).read_text())
    data["docs"][0]["extracted_triples"].append(["only", "two"])
    good = tmp_path / "ok.json"
    good.write_text(json.dumps(data))
    assert read_openie(good, ds.corpus).skipped_triples == 1
    data["docs"][3]["passage"] = "something else"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"record 3: field 'passage': text does not match"):
        read_openie(bad, ds.corpus)


def test_musique_dir_errors(tmp_path):
    (tmp_path / "corpus.json").write_text(json.dumps([{"title": "T", "text": "body"}]))
    (tmp_path / "queries.json").write_text(json.dumps([{"id": "x", "question": "?", "paragraphs": [
        {"title": "T", "paragraph_text": "other", "is_supporting": True}]}]))
    with pytest.raises(InputError, match=r"queries.json: record 0: field 'paragraphs\[0\]': supporting paragraph"):
        musique_dataset(tmp_path)


@requires_musique
def test_musique_dev_reader():
    ds = musique_dataset(MUSIQUE_DIR)
    assert len(ds.corpus) == 1890 and len(ds.queries) == 51
    assert all(2 <= len(q.gold_ids) <= 4 for q in ds.queries)
    assert ds.openie_path is not None
    openie = read_openie(ds.openie_path, ds.corpus)
    assert sum(map(len, openie.triples)) + openie.skipped_triples == 17419
