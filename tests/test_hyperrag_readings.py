"""benchmarks/hyperrag_readings.py --matched (issue 47): one line per run, the trained ball against the untrained
ball and against the matched no-ball row (fed what the ball is fed) in each single-step scope."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import load_benchmark

REPO = Path(__file__).resolve().parents[1]


def load():
    return load_benchmark("hyperrag_readings")


def fake_run(path: Path, n: int = 4) -> Path:
    """A streaming run's predictions: the trained ball finds the gold in both scopes, the untrained ball in neither,
    the matched row (graph_dense) on half of the questions."""
    from hyperrag.retrievers.hyperrag_rows import BALL_ROWS, MATCHED, ROWS

    path.mkdir()
    lines = []
    for i in range(n):
        gold = f"g{i}"
        no_ball = {k: ["x", "y"] for k in ROWS}
        no_ball[MATCHED] = [gold, "x"] if i % 2 else ["x", "y"]
        ball_rows = {k: ([gold, "x"] if k.startswith("trained") else ["x", "y"]) for k in BALL_ROWS}
        lines.append(json.dumps({"id": f"q{i}", "question": "Who?", "ranked_ids": [gold, "x"], "gold_ids": [gold],
                                 "details": {"no_ball": no_ball, "ball_rows": ball_rows}}))
    (path / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_matched_table_has_one_line_per_run_with_both_differences(tmp_path, capsys):
    mod = load()
    a, b = fake_run(tmp_path / "a"), fake_run(tmp_path / "b", n=6)
    assert mod.main([f"A={a}", f"B={b}", "--matched"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("| run | V_i first: trained R@5 | − untrained | − matched")
    body = [line for line in out if line.startswith(("| A |", "| B |"))]
    assert len(body) == 2 and len(out) == 4  # header, rule, one line per run: no per-run report
    cells = [c.strip() for c in body[0].strip("|").split("|")]
    assert cells[1].startswith("100.0")  # trained R@5, V_i first
    assert cells[2].startswith("100.0")  # − untrained: every question gained
    assert cells[3].startswith("50.0")  # − matched: the matched row found half
    assert cells[5].startswith("100.0") and cells[7].startswith("50.0")  # corpus scope likewise
