"""retrieve.py end to end on each downloaded-benchmark format (data=hipporag2_release|hotpotqa|hover|multiple_choice),
through the real Hydra configs, on tiny files the tests write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.data.benchmark_fixtures import (
    TITLES,
    hotpotqa_records,
    hover_claims,
    hover_corpus,
    multiple_choice_records,
    text_of,
    write_json,
    write_jsonl,
    write_release,
)
from tests.test_retrieve_entry import compose_retrieve, retrieve, run_cli


def data_overrides(tmp_path: Path, fmt: str) -> tuple[list[str], list[str]]:
    """Hydra overrides selecting ``fmt`` on files written into ``tmp_path``, and the expected query ids."""
    if fmt.startswith("hipporag2_release:"):
        name = fmt.split(":")[1]
        write_release(tmp_path / "release", name)
        ids = {"2wikimultihopqa": ["w1", "w2"], "musique": ["2hop__1_2"], "popqa": ["7001"]}[name]
        return ["data=hipporag2_release", f"data.name={name}", f"data.dir={tmp_path / 'release'}"], ids
    if fmt == "hotpotqa":
        path = write_json(tmp_path / "hotpot_dev_distractor_v1.json", hotpotqa_records())
        return ["data=hotpotqa", f"data.path={path}"], ["5a8b1", "5a8b2"]
    if fmt == "hover":
        claims = write_json(tmp_path / "hover_dev_release_v1.1.json", hover_claims())
        corpus = write_jsonl(tmp_path / "wiki.jsonl", hover_corpus())
        return ["data=hover", f"data.claims={claims}", f"data.corpus={corpus}"], ["c-1", "c-2"]
    queries = write_jsonl(tmp_path / "dev.jsonl", multiple_choice_records())
    corpus = write_jsonl(tmp_path / "passages.jsonl", [{"title": t, "text": text_of(t)} for t in TITLES])
    return ["data=multiple_choice", f"data.queries={queries}", f"data.corpus={corpus}"], ["g1", "m1", "3", "cq1"]


@pytest.mark.parametrize("fmt", ["hipporag2_release:2wikimultihopqa", "hipporag2_release:musique",
                                 "hipporag2_release:popqa", "hotpotqa", "hover", "multiple_choice"])
def test_dense_retrieval_on_each_format(tmp_path, fmt):
    overrides, ids = data_overrides(tmp_path, fmt)
    metrics = retrieve.run(compose_retrieve(tmp_path, "method=dense", *overrides))
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ids and metrics["queries"] == len(ids)
    with_gold = [r["id"] for r in rows if r["gold_ids"]]
    assert with_gold == (["g1", "cq1"] if fmt == "multiple_choice" else ids)  # MedMCQA/MedQA rows: no gold
    assert metrics["recall@10"] == 100.0  # at most 7 passages: every gold passage is in the top 10
    assert metrics["recall@5"] >= 50.0  # dense MiniLM puts gold passages of these questions near the top
    if fmt in ("hover", "multiple_choice"):  # options travel with the rows (for the reader and accuracy)
        assert all(r["options"] and "answer_index" in r for r in rows)


@pytest.mark.slow
def test_bad_benchmark_file_is_one_line_exit_2(tmp_path):
    claims = hover_claims()
    claims[1]["label"] = "REFUTES"
    path = write_json(tmp_path / "claims.json", claims)
    corpus = write_jsonl(tmp_path / "wiki.jsonl", hover_corpus())
    proc = run_cli(tmp_path, "method=dense", "data=hover", f"data.claims={path}", f"data.corpus={corpus}")
    assert proc.returncode == 2, proc.stderr
    assert "claims.json: record 1: field 'label': expected one of ['SUPPORTED', 'NOT_SUPPORTED'], got 'REFUTES'" \
        in proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
