"""HugRAG's prompt texts (``prompts: paper``, the default) are the paper's Figs 5, 6, 7 and 9 character for character
(as printed, with the template's ``{{ }}`` escapes), checked against the paper's text when it is present beside the
repository (``../shared/papers``)."""

from pathlib import Path

import pytest

from hyperrag.llm.tasks.causal_gate import FIG9
from hyperrag.llm.tasks.causal_path_selection import FIG5, FIG6
from hyperrag.llm.tasks.subgraph_answer import FIG7

PAPER = Path(__file__).resolve().parents[3].parent / "shared" / "papers" / "000_bc0babe69dc2e528.txt"


@pytest.mark.skipif(not PAPER.exists(), reason="the HugRAG paper's text is not beside the repository")
@pytest.mark.parametrize("figure, template", [("5", FIG5), ("6", FIG6), ("7", FIG7), ("9", FIG9)])
def test_templates_are_the_papers_text(figure, template):
    text = PAPER.read_text(encoding="utf-8")
    assert template in text, f"Fig {figure} differs from the paper's text"
    assert f"Figure {figure}." in text
