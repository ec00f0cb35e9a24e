"""Crash safety: atomic writes, torn-line repair, and SIGKILL-then-rerun of OpenIE and batch retrieval."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hyperrag.utils.atomic import atomic_path, atomic_write_json, read_jsonl_log
from tests.conftest import REPO_ROOT
from tests.reliability import batch_child
from tests.reliability.openie_kill import kill_and_resume


def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "metrics.json"
    atomic_write_json(target, {"v": 1})
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"], "no temp file left behind"


def test_torn_last_line_is_dropped_and_cut(tmp_path):
    log = tmp_path / "predictions.jsonl"
    log.write_bytes(b'{"id": "a"}\n[1]\n{"id": "b"}\n{"id": "c", "ranked')
    assert [r["id"] for r in read_jsonl_log(log)] == ["a", "b"]
    assert log.read_bytes().endswith(b'{"id": "b"}\n'), "the torn tail is cut so appends start a fresh line"


@pytest.mark.slow
def test_openie_random_sigkills_then_rerun(tmp_path):
    report = kill_and_resume(tmp_path, kills=3, seed=7)
    assert report["kills"] >= 1 and report["identical"] and report["repeated_requests"] == 0


@pytest.mark.slow
def test_batch_retrieval_sigkill_then_rerun_finishes_only_the_rest(tmp_path):
    out = tmp_path / "run"
    log = out / "predictions.jsonl"
    child = subprocess.Popen([sys.executable, "-m", "tests.reliability.batch_child", str(out), "240", "--delay", "0.15",
                              "--batch-size", "8"], cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and child.poll() is None:
        if log.exists() and log.read_bytes().count(b"\n") >= 40:
            break
        time.sleep(0.02)
    assert child.poll() is None, "the child finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)  # the child we started
    child.wait()
    with log.open("ab") as handle:  # as if the kill had landed mid-line
        handle.write(b'{"id": "s999", "ranked_ids": ["p0')
    done = len(read_jsonl_log(log, repair=False))
    assert 40 <= done < 240
    metrics = batch_child.run(out, 240, batch_size=8)
    assert metrics["resumed_queries"] == done and metrics["retrieved_this_run"] == 240 - done
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["id"] for r in rows] == [f"s{i}" for i in range(240)]
    assert metrics["queries"] == 240 and json.loads((out / "metrics.json").read_text())["metrics"]["queries"] == 240
    again = batch_child.run(out, 240, batch_size=8)  # a finished run: nothing retrieved again
    assert again["retrieved_this_run"] == 0 and again["recall@5"] == metrics["recall@5"]
