"""retrieve.py end to end through the real Hydra config, composed into tmp_path."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import retrieve


def compose_retrieve(tmp_path: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("retrieve", overrides=[f"out={tmp_path / 'run'}", f"cache_dir={tmp_path / 'cache'}",
                                              "hardware=cpu", "llm=none", *overrides])


@pytest.mark.parametrize("method", ["dense", "bm25", "hipporag2", "catrag"])
def test_sample_end_to_end(tmp_path, method):
    cfg = compose_retrieve(tmp_path, f"method={method}")
    metrics = retrieve.run(cfg)
    out = tmp_path / "run"
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert all(len(r["ranked_ids"]) == 10 and len(set(r["ranked_ids"])) == 10 for r in rows)
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["metrics"]["recall@5"] == metrics["recall@5"]
    assert set(metrics) >= {"recall@2", "recall@5", "recall@10", "fcr@2", "fcr@5", "fcr@10"}
    assert metrics["recall@10"] == 100.0  # 12 passages: top-10 of a sensible ranker holds every chain
    assert metrics["recall@5"] >= 60.0


def test_jsonl_data_group(tmp_path):
    sample = REPO_ROOT / "hyperrag" / "sample_data"
    cfg = compose_retrieve(tmp_path, "method=bm25", "data=jsonl", f"data.corpus={sample / 'corpus.jsonl'}",
                           f"data.queries={sample / 'queries.jsonl'}")
    assert retrieve.run(cfg)["queries"] == 6


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO_ROOT / "retrieve.py"), f"out={tmp_path / 'run'}",
                           f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", "llm=none", *args],
                          check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("corpus_lines, expected", [
    ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "corpus.jsonl:2: field 'id': duplicate id 'a'"),
    pytest.param("", "corpus.jsonl: corpus is empty", marks=pytest.mark.slow),
    pytest.param('{"id": "a", "title": 3, "text": "x"}\n', "corpus.jsonl:1: field 'title': expected a string, got int",
                 marks=pytest.mark.slow),
])
def test_bad_input_is_one_line_exit_2(tmp_path, corpus_lines, expected):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(corpus_lines)
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "q", "question": "?", "gold_ids": ["a"]}\n')
    proc = run_cli(tmp_path, "method=bm25", "data=jsonl", f"data.corpus={corpus}", f"data.queries={queries}")
    assert proc.returncode == 2, proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


@pytest.mark.slow
def test_unknown_gold_id_exit_2(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "x"}\n')
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "q", "question": "?", "gold_ids": ["a", "b"]}\n')
    proc = run_cli(tmp_path, "method=bm25", "data=jsonl", f"data.corpus={corpus}", f"data.queries={queries}")
    assert proc.returncode == 2
    assert "queries.jsonl:1: field 'gold_ids': unknown passage id(s) ['b']" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_index_lock_timeout_override_reaches_the_index_build(tmp_path):
    """``retrieve.py ... index_lock.timeout_s=0.5``: a run whose index another process is building waits 0.5 s (the
    override), not the YAML's 60 s, then stops with the one line naming the holder."""
    import shutil
    import time

    from hyperrag.index.lock import IndexBusyError
    from tests.index.test_lock import holding_lock

    cfg = compose_retrieve(tmp_path, "method=hipporag2", "index_lock.timeout_s=0.5")
    retrieve.run(cfg)  # builds the sample's index: its folder is the one the next run builds into
    (index,) = (tmp_path / "cache" / "index").glob("*-kg-*")
    shutil.rmtree(index)
    with holding_lock(index, "another build (test holder)"):
        t0 = time.monotonic()
        with pytest.raises(IndexBusyError, match=r"another build \(test holder\).*waited 0\.5 s"):
            retrieve.run(compose_retrieve(tmp_path, "method=hipporag2", "index_lock.timeout_s=0.5", "resume=false"))
        assert time.monotonic() - t0 < 30  # the YAML's 60 s would be a minute
