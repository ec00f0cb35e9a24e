"""RunTracker: run_info.json at start; at finish a W&B offline run (config, summary, artefact) and a CSV row."""

import json

from omegaconf import OmegaConf

from hyperrag.reporting.csv_log import read_rows
from hyperrag.reporting.tracking import RunTracker, wandb_mode
from hyperrag.reporting.wandb_offline import read_offline_runs


def test_wandb_offline_and_csv(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    assert wandb_mode("auto") == "offline"
    out = tmp_path / "sweep" / "job0"
    cfg = OmegaConf.create({"seed": 0, "out": str(out), "method": {"name": "bm25", "retriever": {"k1": 1.2}},
                            "data": {"name": "sample"}})
    tracker = RunTracker(backends=["wandb", "csv"], group="my-sweep", tags=["test"],
                         artifacts=["predictions.jsonl", "metrics.json", "missing.json"]).start(cfg)
    assert json.loads((out / "run_info.json").read_text())["tracking"]["group"] == "my-sweep"
    (out / "predictions.jsonl").write_text('{"id": "q1"}\n')
    (out / "metrics.json").write_text("{}")
    where = tracker.finish({"recall@2": 40.0, "recall@5": 60.0, "queries": 6, "note": {"nested": 1}})
    assert set(where) == {"wandb", "csv"}
    (run,) = read_offline_runs(out / "wandb")
    assert run["group"] == "my-sweep" and run["name"] == "bm25-sample" and run["job_type"] == "retrieve"
    assert run["config"]["method"]["retriever"]["k1"] == 1.2 and run["config"]["run_dir"] == str(out)
    assert run["summary"]["recall@5"] == 60.0
    assert sorted(f for a in run["artifacts"] if a["type"] == "retrieval-run" for f in a["files"]) == \
        ["metrics.json", "predictions.jsonl"]
    (row,) = read_rows(tmp_path / "sweep" / "runs.csv")  # beside the run directory
    assert row["recall@5"] == "60.0" and row["cfg.method.retriever.k1"] == "1.2" and row["group"] == "my-sweep"
    info = json.loads((out / "run_info.json").read_text())
    assert info["status"] == "finished" and set(info["logged_to"]) == {"wandb", "csv"}


def test_tracking_none_still_writes_run_info(tmp_path):
    cfg = OmegaConf.create({"seed": 1, "out": str(tmp_path / "r"), "method": {"name": "m"}, "data": {"name": "d"}})
    assert RunTracker(backends=[]).start(cfg).finish({"recall@5": 1.0}) == {}
    assert json.loads((tmp_path / "r" / "run_info.json").read_text())["seeds"] == {"seed": 1}
    assert not (tmp_path / "runs.csv").exists() and not (tmp_path / "r" / "wandb").exists()
