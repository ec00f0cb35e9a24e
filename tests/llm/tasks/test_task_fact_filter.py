"""fact_filter (HippoRAG 2 recognition memory): relevant fact IDs, checked and capped."""

import json

from hyperrag.llm.tasks.fact_filter import EXAMPLES, FactFilter

FACTS = [("Marie Curie", "born in", "Warsaw"), ("Warsaw", "capital of", "Poland"),
         ("Vistula", "flows through", "Kraków"), ("Marie Curie", "won", "Nobel Prize in Physics"),
         ("Pierre Curie", "married", "Marie Curie"), ("Poland", "member of", "European Union")]


def test_filter_prompt_and_parse():
    task = FactFilter(max_facts=4, asked=4)
    user = task.messages({"query": "Where was Marie Curie born?", "facts": FACTS})[-1]["content"]
    assert '<fact id="F1">\n["Marie Curie", "born in", "Warsaw"]\n</fact>' in user and "at most 4" in user
    raw = '{"relevant_ids": ["F1", "F2", "F12", "F5", "F4", "F6"]}'
    parsed = task.parse(raw, {"query": "q", "facts": FACTS})
    assert parsed.value == [0, 1, 4, 3] and parsed.dropped_ids == 1  # F12 unknown; capped at 4


def test_caller_keys_and_empty():
    facts = [(101, FACTS[0]), (205, FACTS[1])]
    task = FactFilter(max_facts=None)
    assert task.parse('{"relevant_ids": ["F2"]}', {"query": "q", "facts": facts}).value == [205]
    assert task.parse('{"relevant_ids": []}', {"query": "q", "facts": facts}).value == []


def test_the_released_prompt_s_instructions_and_ten_examples_as_chat_turns():
    """HippoRAG 2's released filter prompt, restated: the same instructions (multi-hop, only candidate facts,
    none when none is relevant, up to 4) and its ten examples as user / assistant turns before the real input."""
    task = FactFilter()  # HippoRAG 2's code keeps up to 5, its prompt asks for up to 4
    assert (task.max_facts, task.asked) == (5, 4)
    turns = task.messages({"query": "Where was Marie Curie born?", "facts": FACTS})
    assert [t["role"] for t in turns] == ["system"] + ["user", "assistant"] * 10 + ["user"]
    system = turns[0]["content"]
    assert "several reasoning steps" in system and "never invent" in system and "pick none" in system
    assert len(EXAMPLES) == 10
    question, _, kept = EXAMPLES[1]  # the director of The Ancestor: only the directing fact is kept
    assert question in turns[3]["content"] and '"the ancestor", "directed by", "guido brignone"' in turns[3]["content"]
    assert json.loads(turns[4]["content"]) == {"relevant_ids": ["F4"]} and kept == [3]
    assert all(len(f) == 5 and all(0 <= i < 5 for i in k) for _, f, k in EXAMPLES)
    parsed = task.parse('{"relevant_ids": ["F1", "F2", "F3", "F4", "F5", "F6"]}', {"query": "q", "facts": FACTS})
    assert parsed.value == [0, 1, 2, 3, 4]  # kept up to 5
