"""causal_path_selection: short IDs, spurious-aware and standard variants, ID checks."""

import pytest

from hyperrag.llm.tasks.causal_path_selection import CausalPathSelection

INPUTS = {"query": "Why did Warsaw flood in 1997?",
          "candidates": [("e1", "Heavy rain -> Vistula rose"), ("e2", "Vistula rose -> Warsaw flooded"),
                         ("e3", "Warsaw hosts a museum"), ("e4", "Ice cream sales rose in July 1997")]}


def test_spurious_variant():
    task = CausalPathSelection("spurious")
    assert '<item id="C4">' in task.messages(INPUTS)[1]["content"]
    raw = '{"kept_ids": ["C1", "C2", "C9"], "spurious_ids": ["C4", "C2", "X1"]}'
    parsed = task.parse(raw, INPUTS)
    assert parsed.value == {"kept": ["e1", "e2"], "spurious": ["e4"]}  # C2 conflict → kept wins
    assert parsed.dropped_ids == 2


def test_standard_variant_with_cap():
    task = CausalPathSelection("standard")
    parsed = task.parse('Answer: {"selected_ids": ["C2", "C1", "C3"]}', {**INPUTS, "max_selected": 2})
    assert parsed.value == ["e2", "e1"] and task.key == "causal_path_selection/standard@v1"


def test_unknown_variant():
    with pytest.raises(ValueError):
        CausalPathSelection("other")
