"""HippoRAG 2's reader structure: Wikipedia-title passages, a one-shot turn, reasoning first, a concise answer."""

import json

import pytest

from hyperrag.generation.reader import answer_queries, resolve_reader_prompt
from hyperrag.llm.tasks.hipporag_qa import HippoRAGQA

INPUTS = {"question": "Where was Marie Curie born?",
          "passages": [("p1", "Marie Curie\nMarie Curie was born in Warsaw."), ("p2", "Warsaw\nWarsaw is in Poland.")]}


def test_messages_follow_the_reference_structure():
    msgs = HippoRAGQA().messages(INPUTS)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]     # system, one shot, the question
    system = msgs[0]["content"]
    for instruction in ("reasoning in thought", "step by step", "concise, definitive answer"):
        assert instruction in system
    assert msgs[1]["content"].startswith("Wikipedia Title: Lake Bled\n") and msgs[1]["content"].endswith("Thought:")
    assert json.loads(msgs[2]["content"])["answer"] == "Triglav"
    assert msgs[3]["content"] == ("Wikipedia Title: Marie Curie\nMarie Curie was born in Warsaw.\n\n"
                                  "Wikipedia Title: Warsaw\nWarsaw is in Poland.\n\n"
                                  "Question: Where was Marie Curie born?\nThought:")


def test_reply_reads_back_in_both_styles():
    raw = '{"thought": "P1 says Warsaw.", "answer": "Warsaw"}'
    assert HippoRAGQA().parse(raw, INPUTS).value == {"answer": "Warsaw", "supporting": []}
    assert HippoRAGQA("explanatory").parse(raw, INPUTS).value == {"answer": "P1 says Warsaw.",
                                                                  "short_answer": "Warsaw", "supporting": []}
    assert HippoRAGQA().key == "hipporag_qa@v1" and HippoRAGQA("explanatory").key == "hipporag_qa/explanatory@v1"


def test_reader_prompt_choice():
    assert resolve_reader_prompt("auto", "hipporag2") == "hipporag2"
    assert resolve_reader_prompt("auto", None) == "grounded"
    assert resolve_reader_prompt("grounded", "hipporag2") == "grounded"
    with pytest.raises(ValueError, match="reader prompt"):
        answer_queries(object(), ["q"], [[]], None, prompt="nope")  # type: ignore[arg-type]
