"""openie_graphrag: typed entities and relations with strength, from a recorded reply."""

from hyperrag.llm.tasks.openie_graphrag import GraphExtraction

RAW = """{"entities": [
  {"name": "Marie Curie", "type": "PERSON", "description": "Physicist and chemist born in Warsaw."},
  {"name": "Warsaw", "type": "location", "description": "City where Curie was born."},
  {"name": "Nobel Prize", "type": "award", "description": "Prize Curie won twice."}
 ],
 "relations": [
  {"source": "Marie Curie", "target": "Warsaw", "description": "Curie was born in Warsaw.", "strength": "9"},
  {"source": "Marie Curie", "target": "Nobel Prize", "description": "Won it in 1903 and 1911.", "strength": 14},
  {"source": "Marie Curie", "target": "Sorbonne", "description": "Taught there.", "strength": 6},
  {"source": "Warsaw", "target": "Warsaw", "description": "self", "strength": 1}
 ]}"""


def test_parse_types_strength_and_endpoint_check():
    task = GraphExtraction()
    inputs = {"passage": "Marie Curie\nMarie Curie was born in Warsaw and won the Nobel Prize twice."}
    assert "Allowed entity types: person, organization" in task.messages(inputs)[1]["content"]
    parsed = task.parse(RAW, inputs)
    out = parsed.output
    assert [e.type for e in out.entities] == ["person", "location", "other"]  # unknown type → other
    assert [(r.source, r.target, r.strength) for r in out.relations] == [
        ("Marie Curie", "Warsaw", 9), ("Marie Curie", "Nobel Prize", 10)]  # clamped to 1..10
    assert parsed.dropped_ids == 2  # unknown endpoint (Sorbonne) and self-loop


def test_custom_types_change_the_key():
    assert GraphExtraction(["person", "award"]).key != GraphExtraction().key
