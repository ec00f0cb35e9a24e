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
    assert "Entity types: person, organization" in task.messages(inputs)[1]["content"]
    parsed = task.parse(RAW, inputs)
    out = parsed.output
    assert [e.type for e in out.entities] == ["person", "location", "other"]  # unknown type → other
    assert [(r.source, r.target, r.strength) for r in out.relations] == [
        ("Marie Curie", "Warsaw", 9), ("Marie Curie", "Nobel Prize", 10)]  # clamped to 1..10
    assert parsed.dropped_ids == 2  # unknown endpoint (Sorbonne) and self-loop


def test_custom_types_change_the_key():
    assert GraphExtraction(["person", "award"]).key != GraphExtraction().key


def test_prompt_carries_every_instruction_of_fig8():
    """HugRAG's Fig 8, instruction by instruction (our wording): all entities of the given types, capitalised names,
    a type from the list, comprehensive descriptions of attributes and activities; every clearly related pair of
    step-1 entities with an explanation and a numeric strength; English; one list; three examples."""
    task = GraphExtraction(["person", "award"])
    system, user = (m["content"] for m in task.messages({"passage": "Marie Curie won the Nobel Prize."}))
    for phrase in ("every entity in the text whose type is in the list", "name in capital letters",
                   "one of the listed types", "comprehensive description of the entity's attributes and activities",
                   "every pair that is clearly related", "named exactly as in step 1",
                   "explaining why you judge them related", "strength: an integer from 1", "in English",
                   "one object listing all the entities and all the relations"):
        assert phrase in system, phrase
    assert [user.count(f"Example {i}:") for i in (1, 2, 3)] == [1, 1, 1] and "Example 4:" not in user
    assert "Entity types: person, award" in user and "Marie Curie won the Nobel Prize." in user


def test_no_cap_on_entities_or_relations():
    """Fig 8 asks for all entities and relations: a reply with 60 of each parses whole (the old schema stopped at
    40), and the reply has room for them."""
    import json

    names = [f"Entity {i}" for i in range(60)]
    raw = json.dumps({"entities": [{"name": n, "type": "person", "description": "d"} for n in names],
                      "relations": [{"source": names[i], "target": names[(i + 1) % 60], "description": "r",
                                     "strength": 5} for i in range(60)]})
    out = GraphExtraction().parse(raw, {"passage": "x"}).output
    assert len(out.entities) == 60 and len(out.relations) == 60
    assert GraphExtraction.max_tokens >= 3072
