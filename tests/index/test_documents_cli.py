"""``python -m hyperrag.index build|insert`` without ``--openie``: the configured LLM extracts the triples; records that
carry their own keep them; chunking and the embedder follow what the index recorded."""

from __future__ import annotations

import json

import pytest

from hyperrag.data import sample_documents
from hyperrag.index.__main__ import main as cli_main
from hyperrag.index.kg_index import load_kg_directory

NEW = [{"id": "n1", "title": "Krakow", "text": "Krakow is a city in southern Poland on the Vistula river."}]


def write_jsonl(path, rows) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def built(tmp_path):
    """An index built from the sample's records with their own triples (no LLM needed), chunked."""
    corpus = write_jsonl(tmp_path / "docs.jsonl", sample_documents())
    out = cli_main(["build", "--index", str(tmp_path / "idx"), "--corpus", corpus, "--chunk", "llm=none"])
    assert out["passages"] == 12 and out["extraction"] == {"given": 12, "extracted": 0, "failed": 0, "openie_skipped": 0}
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["chunking"]["library"] == "semchunk"
    assert manifest["inputs"]["embedder"]["_target_"] == "hyperrag.embedding.TextEncoder"
    return tmp_path / "idx"


def test_insert_without_openie_and_without_llm_counts_the_skipped_extraction(built, tmp_path):
    before = load_kg_directory(built).graph
    out = cli_main(["insert", "--index", str(built), "--corpus", write_jsonl(tmp_path / "new.jsonl", NEW), "llm=none"])
    assert out["added_passages"] == 1 and out["added_entities"] == 0
    assert out["extraction"] == {"given": 0, "extracted": 0, "failed": 0, "openie_skipped": 1}
    after = load_kg_directory(built).graph
    assert after.num_passages == before.num_passages + 1 and after.num_entities == before.num_entities
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["updates"][-1]["extraction"]["openie_skipped"] == 1 and "chunking" in manifest  # carried over


def test_insert_keeps_triples_records_bring(built, tmp_path):
    rows = [{**NEW[0], "triples": [["Wawel Castle", "stands in", "Krakow"]]}]
    out = cli_main(["insert", "--index", str(built), "--corpus", write_jsonl(tmp_path / "new.jsonl", rows), "llm=none"])
    assert out["extraction"]["given"] == 1 and out["added_entities"] == 1  # "wawel castle" is new, "krakow" known
    graph = load_kg_directory(built).graph
    assert ("wawel castle", "stands in", "krakow") in graph.facts


def test_bad_records_stop_with_one_line(built, tmp_path, capsys):
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": "x", "text": "ok"}, {"id": "y", "text": 5}])
    with pytest.raises(SystemExit) as err:
        cli_main(["insert", "--index", str(built), "--corpus", bad, "llm=none"])
    assert err.value.code == 2
    message = capsys.readouterr().err.strip()
    assert "bad.jsonl:2" in message and "'text'" in message and len(message.splitlines()) == 1


@pytest.mark.llm
@pytest.mark.slow
def test_insert_without_openie_extracts_with_the_embedded_llm(built, tmp_path):
    out = cli_main(["insert", "--index", str(built), "--corpus", write_jsonl(tmp_path / "new.jsonl", NEW),
                    "llm=local"])
    report = out["extraction"]
    assert report["openie_skipped"] == 0 and report["extracted"] + report["failed"] == 1
    assert out["added_passages"] == 1
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["updates"][-1]["extraction"] == report
