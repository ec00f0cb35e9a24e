"""BENCHMARKS.md's headline table (issue 48): no equivalence claim without an equivalence test, and every figure
with its bracket as a section below prints it (one bracket per figure)."""

from __future__ import annotations

import re

from tests.conftest import REPO_ROOT

_NUM = r"[+−-]?\d+(?:\.\d+)?"
_FIGURE = re.compile(rf"({_NUM}) \[({_NUM}), ({_NUM})\]")


def _norm(number: str) -> str:
    return number.replace("−", "-").lstrip("+")


def _neg(number: str) -> str:
    n = _norm(number)
    return n[1:] if n.startswith("-") else ("-" + n if float(n) != 0 else n)


def _headline_and_body() -> tuple[list[str], str]:
    """The rows of the current headline table (the first ``## Headline figures`` section) and the history below
    ``# History and details``."""
    text = (REPO_ROOT / "BENCHMARKS.md").read_text()
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("## Headline figures"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("## ", "# ")))
    rows = [x for x in lines[start:end] if x.startswith("| ") and not x.startswith(("| what", "| :"))]
    body = text.split("\n# History and details", 1)[1]
    return rows, body.replace("**", "")


def test_the_headline_claims_no_equivalence_without_an_equivalence_test():
    rows, _ = _headline_and_body()
    assert rows
    for row in rows:
        if re.search(r"\bwithin ±?\d", row):
            assert re.search(r"two one-sided tests|TOST|90% interval", row) and "no equivalence test" not in row, row


def test_every_headline_figure_has_the_bracket_its_section_prints():
    """``v [lo, hi]`` in the headline appears as such in the sections below (a difference may be printed the other
    way round there: ``−v [−hi, −lo]``), so no figure carries two brackets."""
    rows, body = _headline_and_body()
    figures = {(_norm(v), _norm(lo), _norm(hi)) for v, lo, hi in _FIGURE.findall(body)}
    missing = []
    for row in rows:
        for v, lo, hi in _FIGURE.findall(row.replace("**", "")):
            key = (_norm(v), _norm(lo), _norm(hi))
            flipped = (_neg(v), _neg(hi), _neg(lo))
            if key not in figures and flipped not in figures:
                missing.append(f"{v} [{lo}, {hi}] ({row[2:60]}…)")
    assert not missing, missing
