"""context_coverage (CDF-RAG A.3's relevance, judged): the passages the answer needs and a 0–10 coverage."""

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.tasks.context_coverage import ContextCoverage

INPUTS = {"question": "Who married the discoverer of polonium?",
          "passages": [("a", "Marie Curie discovered polonium."), ("b", "Pierre Curie married Marie Curie."),
                       ("c", "Warsaw is a city.")]}


def test_coverage_and_needed_passages():
    parsed = ContextCoverage().parse('{"needed_ids": ["P2", "p1", "P9"], "coverage": 10}', INPUTS)
    assert parsed.value == {"coverage": 1.0, "needed": ["b", "a"]} and parsed.dropped_ids == 1


def test_coverage_is_bounded_and_the_prompt_asks_for_what_the_answer_needs():
    with pytest.raises(OutputInvalid):
        ContextCoverage().parse('{"needed_ids": [], "coverage": 11}', INPUTS)
    system, user = (m["content"] for m in ContextCoverage().messages(INPUTS))
    assert "information needed to answer" in system and "only share words" in system
    assert "Marie Curie discovered polonium." in user
