"""causal_path_selection (HugRAG Figs 5/6): short IDs per kind, spurious-aware and standard variants, ID checks,
draft answer without IDs."""

import pytest

from hyperrag.llm.tasks.causal_path_selection import CausalPathSelection, display_ids

INPUTS = {"query": "Why did Warsaw flood in 1997?",
          "candidates": [("e1", "Heavy rain -> Vistula rose"), ("e2", "Vistula rose -> Warsaw flooded"),
                         ("e3", "Warsaw hosts a museum"), ("e4", "Ice cream sales rose in July 1997")]}


def test_spurious_variant():
    task = CausalPathSelection("spurious", prompts="extended")
    assert '<item id="C4">' in task.messages(INPUTS)[1]["content"]
    raw = '{"causal_ids": ["C1", "C2", "C9"], "spurious_ids": ["C4", "C2", "X1"], "draft_answer": "rain (C1)"}'
    parsed = task.parse(raw, INPUTS)
    assert parsed.value == {"kept": ["e1", "e2"], "spurious": ["e4"], "draft": "rain"}  # C2 conflict → causal wins
    assert parsed.dropped_ids == 2


def test_standard_variant_with_caps():
    task = CausalPathSelection("standard", prompts="extended")
    inputs = {**INPUTS, "max_selected": 2, "max_answer_words": 3}
    parsed = task.parse('Answer: {"causal_ids": ["C2", "C1", "C3"], "draft_answer": "heavy rain upstream '
                        'in the Vistula basin"}', inputs)
    assert parsed.value == {"kept": ["e2", "e1"], "spurious": [], "draft": "heavy rain upstream"}
    assert task.key == "causal_path_selection/standard@v2"
    assert "at most 2 IDs" in task.messages(inputs)[1]["content"]


def test_kind_letters_for_nodes_modules_and_edges():
    cands = [{"id": ("n", 4), "text": "Warsaw", "kind": "node"}, {"id": ("f", 9), "text": "rain -> flood", "kind": "edge"},
             {"id": ("n", 5), "text": "Vistula", "kind": "node"}, {"id": ("m", 1), "text": "Rivers", "kind": "module"}]
    task = CausalPathSelection("spurious", prompts="extended")
    assert [it.id for it in task.items({"candidates": cands})] == ["N1", "E1", "N2", "M1"]
    assert display_ids(["node", "edge", "node", "module"]) == ["N1", "E1", "N2", "M1"]
    parsed = task.parse('{"causal_ids": ["E1", "N2"], "spurious_ids": ["M1"], "draft_answer": "unknown"}',
                        {"query": "q", "candidates": cands})
    assert parsed.value == {"kept": [("f", 9), ("n", 5)], "spurious": [("m", 1)], "draft": "unknown"}


def test_unknown_variant():
    with pytest.raises(ValueError):
        CausalPathSelection("other")


FIG5_LINES = (  # HugRAG's Fig 5, verbatim (the instruction text; the inputs are filled in)
    "---Role---\nYou are a careful causality analyst acting as a reranker for retrieval.",
    ("select the most important items consisting the causal graph and output them in 'precise'.\n"
     "Also output the least important items as the spurious information in 'ct_precise'."),
    "- Rank 'ct_precise' from least important to more important.", "- Do NOT include any IDs in 'p_answer'.",
    '  "ct_precise": ["T7", "N9"],', "- 'ct_precise' length: at most 3 items.", "- 'p_answer' length: at most 7 words.")
FIG6_LINES = ("select the most important items that best support answering the query as a causal graph.",
              '- If evidence is insufficient, say so in `p_answer` (e.g., "Unknown").',
              "- `precise` length: at most 2 items.")


def test_paper_json_prompt_is_fig5_with_the_papers_keys():
    task = CausalPathSelection(prompts="paper_json")
    inputs = {**INPUTS, "max_selected": 2, "max_spurious": 3, "max_answer_words": 7}
    system, user = (m["content"] for m in task.messages(inputs))
    for text in FIG5_LINES:
        assert text in user, text
    assert "C4 | Ice cream sales rose in July 1997" in user and "Why did Warsaw flood" in user
    assert "causal_ids" not in system + user and "unknown" not in (system + user).lower()
    assert task.key == "causal_path_selection/spurious/paper@v2"
    raw = '{"precise": ["C2", "C1", "C3"], "ct_precise": ["C4", "C2"], "p_answer": "heavy rain C1 upstream"}'
    parsed = task.parse(raw, inputs)
    assert parsed.value == {"kept": ["e2", "e1"], "spurious": ["e4"], "draft": "heavy rain upstream"}
    assert sorted(task.schema()["properties"]) == ["ct_precise", "p_answer", "precise"]


def test_paper_json_standard_prompt_is_fig6():
    task = CausalPathSelection("standard", prompts="paper_json")
    user = task.messages({**INPUTS, "max_selected": 2})[1]["content"]
    for text in FIG6_LINES:
        assert text in user, text
    assert "ct_precise" not in user
    assert task.parse('{"precise": ["C1"], "p_answer": "rain"}', INPUTS).value == \
        {"kept": ["e1"], "spurious": [], "draft": "rain"}


def test_extended_form_restores_ours():
    task = CausalPathSelection(prompts="extended")
    system, user = (m["content"] for m in task.messages(INPUTS))
    assert "causal_ids" in user and "spurious_ids" in user and '"unknown" rather than guess' in system
    assert "---Role---" not in user and task.key == "causal_path_selection/spurious@v2"
