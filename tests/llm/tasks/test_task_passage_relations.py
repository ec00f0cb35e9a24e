"""passage_relations (HyperRAG): typed links between passage IDs."""

from hyperrag.llm.tasks.passage_relations import PassageRelations

INPUTS = {"passages": [("p01", "Marie Curie was born in Warsaw."), ("p02", "Warsaw is the capital of Poland."),
                       ("p03", "The 1997 flood hit Warsaw after heavy rain.")]}


def test_relations():
    raw = """{"relations": [
      {"source_id": "P1", "target_id": "P2", "type": "Same Entity", "description": "Both about Warsaw"},
      {"source_id": "P3", "target_id": "P2", "type": "causes", "description": "flood affects city"},
      {"source_id": "P2", "target_id": "P2", "type": "related", "description": "self"},
      {"source_id": "P1", "target_id": "P8", "type": "related", "description": "unknown"},
      {"source_id": "P1", "target_id": "P3", "type": "mentions", "description": "odd type"}]}"""
    parsed = PassageRelations().parse(raw, INPUTS)
    assert parsed.value == [("p01", "p02", "same_entity", "Both about Warsaw"),
                            ("p03", "p02", "causes", "flood affects city"),
                            ("p01", "p03", "related", "odd type")]
    assert parsed.dropped_ids == 2
