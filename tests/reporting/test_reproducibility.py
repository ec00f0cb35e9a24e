"""The same retrieve command twice gives the same retrieval metrics and predictions (sample, llm=none)."""

import json

from tests.test_retrieve_entry import compose_retrieve, retrieve

TIMING = ("retrieve_seconds", "queries_per_second", "index_seconds")


def test_same_command_twice_same_metrics(tmp_path, shared_cache):
    runs = []
    for name in ("first", "second"):
        cfg = compose_retrieve(tmp_path, "method=hipporag2", "tracking=csv", f"out={tmp_path / name}",
                               f"cache_dir={shared_cache}")
        metrics = retrieve.run(cfg)
        runs.append(({k: v for k, v in metrics.items() if k not in TIMING and "seconds" not in k},  # + cost.*.seconds
                     (tmp_path / name / "predictions.jsonl").read_text(),
                     json.loads((tmp_path / name / "run_info.json").read_text())))
    (m1, p1, i1), (m2, p2, i2) = runs
    assert m1 == m2 and p1 == p2
    for info in (i1, i2):
        assert info["seeds"]["seed"] == 0 and "torch" in info["packages"] and info["status"] == "finished"
        assert info["config"]["method"]["retriever"]["damping"] == 0.5
    assert i1["git"] == i2["git"] and i1["packages"] == i2["packages"]
    rows = (tmp_path / "runs.csv").read_text().splitlines()
    assert len(rows) == 3  # header + one row per run
