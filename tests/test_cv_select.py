"""benchmarks/cv_select.py (issue 41): a choice among finished runs, each fold scored by the candidate chosen on
the other folds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hyperrag.eval.per_query import RunValues
from tests.conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]


def load():
    return load_benchmark("cv_select")


def run(name: str, recall: dict[str, float]) -> RunValues:
    return RunValues(name, None, {"recall@5": recall, "fcr@5": {q: float(v == 1.0) for q, v in recall.items()}})


QS = [f"q{i:02d}" for i in range(20)]


def test_folds_partition_the_questions_and_follow_the_seed():
    cv = load()
    folds = cv.split_folds(QS, 5, seed=0)
    assert sorted(q for f in folds for q in f) == QS and {len(f) for f in folds} == {4}
    assert folds == cv.split_folds(list(reversed(QS)), 5, seed=0) and folds != cv.split_folds(QS, 5, seed=1)
    with pytest.raises(ValueError):
        cv.split_folds(QS, 1, 0)


def test_each_fold_is_scored_by_the_choice_made_on_the_other_folds():
    cv = load()
    folds = cv.split_folds(QS, 4, seed=3)
    # "a" is best overall; "b" is perfect on fold 0 only, so it can never be chosen for fold 0 itself
    a = run("a", {q: 0.75 for q in QS})
    b = run("b", {q: (1.0 if q in folds[0] else 0.0) for q in QS})
    res = cv.cross_validate([b, a], "recall@5", folds=4, seed=3, also=["fcr@5"])
    assert res.chosen == [1, 1, 1, 1]
    assert res.interval("recall@5").estimate == pytest.approx(75.0)
    assert res.interval("fcr@5").estimate == 0.0  # the same choices, read on the second metric
    # "c" misses fold 1 only: chosen where fold 1 is held out (it wins on the others) and scored 0 there; where
    # fold 1 is a training fold "c" averages 2/3 < 0.75 and "a" is chosen
    c = run("c", {q: (0.0 if q in folds[1] else 1.0) for q in QS})
    res = cv.cross_validate([a, c], "recall@5", folds=4, seed=3)
    held_out = res.values["recall@5"]
    assert res.chosen == [0, 1, 0, 0] and sum(held_out.values()) / len(held_out) == pytest.approx(0.5625)


def test_command_line_prints_choices_and_paired_differences(tmp_path, capsys):
    cv = load()
    dirs = []
    for name, hits in (("x", 1), ("y", 0)):
        d = tmp_path / name
        d.mkdir()
        rows = [{"id": q, "question": q, "ranked_ids": ["g"] if hits else ["n"], "gold_ids": ["g"]} for q in QS]
        (d / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        dirs.append(str(d))
    out = tmp_path / "cv.json"
    assert cv.main([dirs[1], dirs[0], "--folds", "5", "--also", "fcr@5", "--baseline", dirs[1],
                    "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cross-validated recall@5: 100.0" in text and text.count(f"{dirs[0]}") >= 5
    data = json.loads(out.read_text())
    assert data["chosen"] == [dirs[0]] * 5 and data["baselines"][dirs[1]]["recall@5"]["difference"][0] == 100.0
    assert cv.main([str(tmp_path / "missing")]) == 2
