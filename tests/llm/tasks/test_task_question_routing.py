"""question_routing (HyperRAG §4.2): single-step for a straightforward question, sub-questions for a multi-hop one."""

from hyperrag.llm.tasks.question_routing import QuestionRouting

INPUTS = {"query": "Which river flows through the city where Marie Curie was born?"}


def test_multi_hop_questions_get_ordered_sub_questions():
    raw = '{"multi_hop": true, "sub_questions": ["Where was Marie Curie born?", "Which river flows through #1?"]}'
    assert QuestionRouting().parse(raw, INPUTS).value == ["Where was Marie Curie born?",
                                                          "Which river flows through #1?"]


def test_single_hop_and_degenerate_answers_route_to_one_step():
    task = QuestionRouting()
    assert task.parse('{"multi_hop": false, "sub_questions": ["x?", "y?"]}', INPUTS).value == []
    assert task.parse('{"multi_hop": true, "sub_questions": ["only one?"]}', INPUTS).value == []
    system, user = (m["content"] for m in task.messages(INPUTS))
    assert "single lookup" in system and INPUTS["query"] in user
