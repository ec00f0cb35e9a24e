"""causal_path_selection (HugRAG Figs 5/6): short IDs per kind, spurious-aware and standard variants, ID checks,
draft answer without IDs."""

import pytest

from hyperrag.llm.tasks.causal_path_selection import CausalPathSelection, display_ids

INPUTS = {"query": "Why did Warsaw flood in 1997?",
          "candidates": [("e1", "Heavy rain -> Vistula rose"), ("e2", "Vistula rose -> Warsaw flooded"),
                         ("e3", "Warsaw hosts a museum"), ("e4", "Ice cream sales rose in July 1997")]}


def test_spurious_variant():
    task = CausalPathSelection("spurious")
    assert '<item id="C4">' in task.messages(INPUTS)[1]["content"]
    raw = '{"causal_ids": ["C1", "C2", "C9"], "spurious_ids": ["C4", "C2", "X1"], "draft_answer": "rain (C1)"}'
    parsed = task.parse(raw, INPUTS)
    assert parsed.value == {"kept": ["e1", "e2"], "spurious": ["e4"], "draft": "rain"}  # C2 conflict → causal wins
    assert parsed.dropped_ids == 2


def test_standard_variant_with_caps():
    task = CausalPathSelection("standard")
    inputs = {**INPUTS, "max_selected": 2, "max_answer_words": 3}
    parsed = task.parse('Answer: {"causal_ids": ["C2", "C1", "C3"], "draft_answer": "heavy rain upstream '
                        'in the Vistula basin"}', inputs)
    assert parsed.value == {"kept": ["e2", "e1"], "spurious": [], "draft": "heavy rain upstream"}
    assert task.key == "causal_path_selection/standard@v2"
    assert "at most 2 IDs" in task.messages(inputs)[1]["content"]


def test_kind_letters_for_nodes_modules_and_edges():
    cands = [{"id": ("n", 4), "text": "Warsaw", "kind": "node"}, {"id": ("f", 9), "text": "rain -> flood", "kind": "edge"},
             {"id": ("n", 5), "text": "Vistula", "kind": "node"}, {"id": ("m", 1), "text": "Rivers", "kind": "module"}]
    task = CausalPathSelection("spurious")
    assert [it.id for it in task.items({"candidates": cands})] == ["N1", "E1", "N2", "M1"]
    assert display_ids(["node", "edge", "node", "module"]) == ["N1", "E1", "N2", "M1"]
    parsed = task.parse('{"causal_ids": ["E1", "N2"], "spurious_ids": ["M1"], "draft_answer": "unknown"}',
                        {"query": "q", "candidates": cands})
    assert parsed.value == {"kept": [("f", 9), ("n", 5)], "spurious": [("m", 1)], "draft": "unknown"}


def test_unknown_variant():
    with pytest.raises(ValueError):
        CausalPathSelection("other")
