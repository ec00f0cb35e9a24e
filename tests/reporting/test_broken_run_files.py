"""A run file that is not valid JSON is named in one line (exit 2 from report.py), not skipped as "no runs found"
(hyperrag/reporting/collect.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hyperrag.errors import InputError
from hyperrag.reporting.collect import find_runs
from tests.conftest import REPO_ROOT


def _run(folder, metrics_text: str | None = None):
    folder.mkdir(parents=True)
    good = json.dumps({"dataset": "musique", "method": "dense", "metrics": {"recall@5": 50.0}})
    (folder / "metrics.json").write_text(good if metrics_text is None else metrics_text)
    return folder


@pytest.mark.parametrize(("name", "text", "line"), [
    ("metrics.json", '{"dataset": "musique",\n "metrics": {"recall@5": 5', "2: not valid JSON: Expecting "),
    ("run_info.json", "{oops", "1: not valid JSON: Expecting property name enclosed in double quotes (column 2)"),
    ("evaluation.json", "", "1: not valid JSON: Expecting value (column 1)"),
])
def test_a_broken_run_file_is_named_with_its_line(tmp_path, name, text, line):
    _run(tmp_path / "runs" / "good")
    run = _run(tmp_path / "runs" / "broken")
    (run / name).write_text(text)
    with pytest.raises(InputError) as err:
        find_runs(str(tmp_path / "runs"))
    assert err.value.one_line().startswith(f"{run / name}:{line}")


def test_other_json_named_metrics_is_still_not_a_run(tmp_path):
    """A valid metrics.json that is no retrieval run (training's) is passed over, as before."""
    _run(tmp_path / "runs" / "train", json.dumps({"loss": 0.1}))
    _run(tmp_path / "runs" / "good")
    assert [r.path.name for r in find_runs(str(tmp_path / "runs"))] == ["good"]


@pytest.mark.slow  # a subprocess (~5-8 s on 2 busy cores); the in-process tests above run by default
def test_report_py_names_the_broken_metrics_json_and_exits_2(tmp_path):
    run = _run(tmp_path / "runs" / "only", "{not json")
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "report.py"), f"runs={tmp_path / 'runs'}",
                           f"out={tmp_path / 'reports'}"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        (f"error: {run / 'metrics.json'}:1: not valid JSON: Expecting property name enclosed in double quotes "
         "(column 2)")]
    assert not (tmp_path / "reports").exists()


def test_broken_per_query_files_stop_the_intervals_cli_in_one_line(tmp_path, capsys):
    """The per-query reader opens metrics.json and evaluation.jsonl again: a broken one is named with its line
    (review finding 7)."""
    from hyperrag.eval.intervals.__main__ import main

    runs = []
    for name in ("a", "b"):
        run = tmp_path / name
        run.mkdir()
        row = {"id": "q1", "question": "?", "ranked_ids": ["g"], "gold_ids": ["g"], "answers": []}
        (run / "predictions.jsonl").write_text(json.dumps(row) + "\n")
        (run / "metrics.json").write_text(json.dumps({"dataset": "d", "method": name, "metrics": {"recall@5": 100}}))
        runs.append(run)
    (runs[1] / "evaluation.jsonl").write_text('{"id": "q1", "em": 1}\n{"id": "q2", "em"\n')
    with pytest.raises(SystemExit) as stop:
        main([str(runs[0]), str(runs[1])])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "evaluation.jsonl:2: not valid JSON" in err[0]
    (runs[1] / "evaluation.jsonl").unlink()
    (runs[1] / "metrics.json").write_text('{"metrics": {')
    with pytest.raises(SystemExit) as stop:
        main([str(runs[0]), str(runs[1])])
    assert stop.value.code == 2 and "metrics.json" in capsys.readouterr().err
