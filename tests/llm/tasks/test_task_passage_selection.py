"""passage_selection (HyperRAG): selected passage IDs, best first."""

from hyperrag.llm.tasks.passage_selection import PassageSelection

INPUTS = {"query": "Who married the discoverer of polonium?",
          "passages": ["Marie Curie discovered polonium.", "Pierre Curie married Marie Curie.", "Warsaw is a city."]}


def test_selection():
    parsed = PassageSelection().parse('{"selected_ids": ["P2", "p1", "P0"]}', {**INPUTS, "max_selected": 5})
    assert parsed.value == [1, 0] and parsed.dropped_ids == 1


def test_the_prompt_asks_for_potentially_helpful_passages_and_caps_only_when_asked():
    task = PassageSelection()
    system, user = (m["content"] for m in task.messages(INPUTS))
    assert "potentially helpful" in system and "at most" not in user  # the paper's wording; no cap by default
    assert "Select at most 2." in task.messages({**INPUTS, "max_selected": 2})[1]["content"]
    three = '{"selected_ids": ["P1", "P2", "P3"]}'
    assert task.parse(three, INPUTS).value == [0, 1, 2]  # uncapped: every potentially helpful passage kept
    assert task.parse(three, {**INPUTS, "max_selected": 2}).value == [0, 1]
