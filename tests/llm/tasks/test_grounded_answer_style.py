"""The reader's answer styles: short (unchanged prompts) and explanatory (an explanation plus the short answer)."""

import pytest

from hyperrag.llm.tasks.grounded_answer import GroundedAnswer

INPUTS = {"question": "Where was Marie Curie born?", "passages": [("p1", "Marie Curie was born in Warsaw.")]}


def test_short_style_keeps_the_messages_and_the_cache_key():
    short = GroundedAnswer()
    assert short.key == "grounded_answer@v1" and GroundedAnswer("short").messages(INPUTS) == short.messages(INPUTS)
    assert "not a sentence" in short.system(INPUTS)


def test_explanatory_style_asks_for_an_explanation_and_the_bare_answer():
    task = GroundedAnswer("explanatory")
    system = task.system(INPUTS)
    assert task.key == "grounded_answer/explanatory@v1"
    for instruction in ("explanation grounded in the passages", "as long as the question needs",
                        "short_answer", "not a sentence", "Do not add facts the passages do not give"):
        assert instruction in system
    assert '"short_answer"' in task.user(INPUTS)
    parsed = task.parse('{"answer": "She was born in Warsaw, as P1 says.", "short_answer": "Warsaw", '
                        '"supporting_ids": ["P1", "P9"]}', INPUTS)
    assert parsed.value == {"answer": "She was born in Warsaw, as P1 says.", "short_answer": "Warsaw",
                            "supporting": ["p1"]}
    assert parsed.dropped_ids == 1
    with pytest.raises(ValueError):
        GroundedAnswer("long")


def test_explanatory_multiple_choice_reads_the_option_from_the_short_answer():
    task = GroundedAnswer("explanatory")
    inputs = {**INPUTS, "options": ["Paris", "Warsaw"]}
    assert "exactly one option's letter" in task.system(inputs)
    value = task.parse('{"answer": "P1 names Warsaw.", "short_answer": "B", "supporting_ids": ["P1"]}', inputs).value
    assert value["answer"] == "Warsaw" and value["option"] == 1 and value["explanation"] == "P1 names Warsaw."
