"""grounded_answer: short answer with checked passage citations."""

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
