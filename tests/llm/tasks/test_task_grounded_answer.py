"""grounded_answer: short answer with checked passage citations; with options, one of the options."""

import json

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.tasks.grounded_answer import GroundedAnswer

INPUTS = {"question": "In which city was the discoverer of polonium born?",
          "passages": [{"id": "p01", "title": "Marie Curie", "text": "Marie Curie discovered polonium; born in Warsaw."},
                       {"id": "p02", "title": "Warsaw", "text": "Warsaw is the capital of Poland."}]}


def test_answer_with_citations():
    task = GroundedAnswer()
    user = task.messages(INPUTS)[1]["content"]
    assert '<passage id="P1">\nMarie Curie\nMarie Curie discovered' in user
    parsed = task.parse('{"answer": "Warsaw", "supporting_ids": ["P1", "P7"],}', INPUTS)
    assert parsed.value == {"answer": "Warsaw", "supporting": ["p01"]} and parsed.dropped_ids == 1


MC_INPUTS = {**INPUTS, "question": "Where was the discoverer of polonium born?",
             "options": ["Paris", "Warsaw", "Krakow"]}


def test_without_options_the_prompt_is_the_free_form_one():
    task = GroundedAnswer()
    system, user = (m["content"] for m in task.messages(INPUTS))
    assert "Options" not in user and task.OPTIONS_ROLE not in system
    assert user.endswith('Reply with {"answer": "...", "supporting_ids": ["P..", ...]}.')
    assert task.messages({**INPUTS, "options": []}) == task.messages(INPUTS)


def test_options_are_shown_lettered_and_the_reply_is_read_back_to_one():
    task = GroundedAnswer()
    system, user = (m["content"] for m in task.messages(MC_INPUTS))
    assert task.OPTIONS_ROLE in system
    assert "Options:\n<data>\nA. Paris\nB. Warsaw\nC. Krakow\n</data>" in user
    assert '"answer": "<one letter, A to C>"' in user
    for reply, option in [("B", 1), ("(c)", 2), ("warsaw", 1), ("B) Warsaw", 1), ("It is Paris.", 0)]:
        parsed = task.parse(json.dumps({"answer": reply, "supporting_ids": ["P1"]}), MC_INPUTS)
        assert parsed.value == {"answer": MC_INPUTS["options"][option], "option": option, "supporting": ["p01"]}


@pytest.mark.parametrize("reply", ["D", "Lodz", "", "Paris or Warsaw"])
def test_a_reply_naming_no_option_is_invalid(reply):
    with pytest.raises(OutputInvalid, match="names none of the options; reply with one of A, B, C"):
        GroundedAnswer().parse(json.dumps({"answer": reply, "supporting_ids": []}), MC_INPUTS)
