"""passage_selection (HyperRAG): selected passage IDs, best first."""

from hyperrag.llm.tasks.passage_selection import PassageSelection

INPUTS = {"query": "Who married the discoverer of polonium?",
          "passages": ["Marie Curie discovered polonium.", "Pierre Curie married Marie Curie.", "Warsaw is a city."]}


def test_selection():
    parsed = PassageSelection().parse('{"selected_ids": ["P2", "p1", "P0"]}', {**INPUTS, "max_selected": 5})
    assert parsed.value == [1, 0] and parsed.dropped_ids == 1
