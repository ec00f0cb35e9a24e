"""fact_filter (HippoRAG 2 recognition memory): relevant fact IDs, checked and capped."""

from hyperrag.llm.tasks.fact_filter import FactFilter

FACTS = [("Marie Curie", "born in", "Warsaw"), ("Warsaw", "capital of", "Poland"),
         ("Vistula", "flows through", "Kraków"), ("Marie Curie", "won", "Nobel Prize in Physics"),
         ("Pierre Curie", "married", "Marie Curie"), ("Poland", "member of", "European Union")]


def test_filter_prompt_and_parse():
    task = FactFilter(max_facts=4)
    user = task.messages({"query": "Where was Marie Curie born?", "facts": FACTS})[1]["content"]
    assert '<fact id="F1">\n["Marie Curie", "born in", "Warsaw"]\n</fact>' in user and "at most 4" in user
    raw = '{"relevant_ids": ["F1", "F2", "F12", "F5", "F4", "F6"]}'
    parsed = task.parse(raw, {"query": "q", "facts": FACTS})
    assert parsed.value == [0, 1, 4, 3] and parsed.dropped_ids == 1  # F12 unknown; capped at 4


def test_caller_keys_and_empty():
    facts = [(101, FACTS[0]), (205, FACTS[1])]
    task = FactFilter(max_facts=None)
    assert task.parse('{"relevant_ids": ["F2"]}', {"query": "q", "facts": facts}).value == [205]
    assert task.parse('{"relevant_ids": []}', {"query": "q", "facts": facts}).value == []
