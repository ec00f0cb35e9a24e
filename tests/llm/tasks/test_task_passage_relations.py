"""passage_relations (HyperRAG): typed links between passage IDs, for one question."""

import pytest

from hyperrag.llm.tasks.passage_relations import PassageRelations

INPUTS = {"query": "Which river flows through the city where Marie Curie was born?",
          "passages": [("p01", "Marie Curie was born in Warsaw."), ("p02", "The Vistula flows through Warsaw."),
                       ("p03", "Curie was born in Warsaw in 1867, in the Russian partition.")]}


def test_relations_are_typed_with_the_papers_three_types():
    raw = """{"relations": [
      {"source_id": "P1", "target_id": "P2", "type": "Expand", "description": "birthplace -> its river"},
      {"source_id": "P3", "target_id": "P1", "type": "supports", "description": "same birthplace"},
      {"source_id": "P2", "target_id": "P2", "type": "complement", "description": "self"},
      {"source_id": "P1", "target_id": "P8", "type": "support", "description": "unknown"},
      {"source_id": "P3", "target_id": "P2", "type": "causes", "description": "odd type"}]}"""
    parsed = PassageRelations().parse(raw, INPUTS)
    # an unknown type ("causes") is an invalid answer: dropped and counted, never read as another type
    assert parsed.value == [("p01", "p02", "expand", "birthplace -> its river"),
                            ("p03", "p01", "support", "same birthplace")]
    assert parsed.dropped_ids == 3


def test_the_question_is_shown_and_required():
    task = PassageRelations()
    user = task.messages(INPUTS)[1]["content"]
    assert INPUTS["query"] in user and "support|complement|expand" in user
    assert "in answering" in task.messages(INPUTS)[0]["content"]
    with pytest.raises(ValueError, match="query"):
        task.messages({"passages": INPUTS["passages"]})
