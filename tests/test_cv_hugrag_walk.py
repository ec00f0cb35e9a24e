"""benchmarks/cv_hugrag_walk.py (issue 46): one tiny run on the sample corpus with the oracle — the graph setting
(``--graph hipporag``) and a retriever override reach the index, every grid setting is ranked with gates on and off,
and the held-out records carry the per-query walk fields."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks" / "cv_hugrag_walk.py"


@pytest.mark.slow
def test_tiny_walk_cv_on_the_sample(tmp_path):
    out = tmp_path / "walk.json"
    env = {**os.environ, "HYPERRAG_CACHE": os.environ.get("HYPERRAG_CACHE") or str(tmp_path / "cache")}
    cmd = [sys.executable, str(BENCH), "--data-config", "sample", "--folds", "2", "--grid", "max_hops=2,null",
           "max_rows=60", "--graph", "hipporag", "--override", "token_budget=512", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["graph"] == "hipporag" and result["index"]["graph"]["text_form"] == "hipporag"
    assert result["token_budget"] == 512 and result["llm"].startswith("upper bound")
    assert [(s["max_hops"], s["max_rows"]) for s in result["settings"]] == [(2, 60), (None, 60)]
    for s in result["settings"]:
        assert set(s) >= {"on", "off", "on_minus_off (in-sample)"}
    held = result["per_query_held_out"]
    assert len(held) == result["queries"] > 0
    for row in held:
        assert {"id", "type", "setting", "on", "off"} <= set(row)
        assert {"r5", "fcr5", "stop", "gold_gate_only", "gold_cut"} <= set(row["on"])
    assert set(result["cross_validated"]) >= {"on", "off", "on_minus_off"}
    assert {"reachability", "coverage"} <= set(result["appendix_e"]["delta"])
