"""``hardware.devices=2`` on CPU: two processes (Lightning DDP over gloo) shard the queries; their predictions
must be the single-process ones (same ids in the same order, each once, same ranked passages and scores)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import retrieve as retrieve_entry


def retrieve(tmp_path: Path, *args: str) -> None:
    """``retrieve.py`` on the bundled sample (llm=none, CPU, batches of 2) from ``tmp_path``."""
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "retrieve.py"), f"cache_dir={tmp_path / 'cache'}",
                           "data=sample", "llm=none", "hardware=cpu", "tracking=none", "batch_size=2", *args],
                          check=False, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def load(out: Path) -> tuple[list[dict], dict]:
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return rows, json.loads((out / "metrics.json").read_text())["metrics"]


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dense", "hipporag2"])
def test_two_processes_equal_one(tmp_path, method):
    retrieve(tmp_path, f"method={method}", "hardware.devices=1", f"out={tmp_path / 'one'}")
    # default out (stamped with the start time): the second process starts later and resolves another stamp;
    # its rows must still land in rank 0's directory
    retrieve(tmp_path, f"method={method}", "hardware.devices=2")
    runs = list((tmp_path / "outputs" / "retrieve" / "sample" / method).iterdir())
    assert len(runs) == 1, runs  # no run directory of the second process
    one, one_metrics = load(tmp_path / "one")
    two, two_metrics = load(runs[0])
    ids = [r["id"] for r in one]
    assert ids == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert [r["id"] for r in two] == ids  # every query exactly once, in query order
    for a, b in zip(one, two):
        assert b["ranked_ids"] == a["ranked_ids"], a["id"]
        assert b["scores"] == pytest.approx(a["scores"], abs=1e-5), a["id"]
        assert (b["question"], b["gold_ids"]) == (a["question"], a["gold_ids"])
    assert two_metrics["processes"] == 2 and "processes" not in one_metrics
    for key in ("recall@2", "recall@5", "recall@10", "fcr@2", "fcr@5", "fcr@10", "queries", "llm_steps_skipped"):
        assert two_metrics[key] == one_metrics[key], key
    assert not list(runs[0].glob("predictions.rank*.jsonl"))  # rank 0 merged the shards and wrote once


def test_cross_fitting_refuses_several_devices(tmp_path):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        cfg = compose("retrieve", overrides=[f"out={tmp_path}", "hardware=cpu", "hardware.devices=2", "cv_folds=3"])
    with pytest.raises(InputError, match=r"^hardware.devices: cv_folds runs in one process"):
        retrieve_entry.check_devices(cfg)
    cfg.hardware.devices = 1
    retrieve_entry.check_devices(cfg)
