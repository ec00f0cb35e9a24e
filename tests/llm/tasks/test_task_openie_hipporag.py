"""openie_hipporag: NER then triples, parsed from recorded model replies."""

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.prompting import DATA_RULE
from hyperrag.llm.tasks.openie_hipporag import NamedEntityExtraction, TripleExtraction

PASSAGE = {"title": "Marie Curie", "text": "Marie Curie was born in Warsaw in 1867. She married Pierre Curie in 1895."}

NER_RAW = """Here are the named entities:
```json
{"named_entities": ["Marie Curie", "Warsaw", "1867", "Pierre Curie", "1895", "warsaw", 1895, ""]}
```"""

TRIPLES_RAW = """{"triples": [
  ["Marie Curie", "born in", "Warsaw"],
  ["Marie Curie", "born in", "1867"],
  ["Marie Curie", "married", "Pierre Curie"],
  ["Marie Curie", "married in"],
  ["Marie Curie", "married", "Pierre Curie"],
  ["Marie Curie", "married in", 1895],
]}"""


def test_ner_prompt_and_parse():
    task = NamedEntityExtraction()
    msgs = task.messages({"passage": PASSAGE})
    assert DATA_RULE in msgs[0]["content"] and "<passage>\nMarie Curie\nMarie Curie was born" in msgs[1]["content"]
    parsed = task.parse(NER_RAW, {"passage": PASSAGE})
    assert parsed.value == ["Marie Curie", "Warsaw", "1867", "Pierre Curie", "1895"]  # deduped, cleaned
    assert parsed.repaired and parsed.dropped_ids == 1  # the empty string


def test_query_ner_is_the_same_task_on_a_question():
    task = NamedEntityExtraction(source="query")
    inputs = {"query": "Where was Madame Curie born?"}
    system, user = task.messages(inputs)
    assert "one question" in system["content"] and DATA_RULE in system["content"]
    assert "<data>\nWhere was Madame Curie born?\n</data>" in user["content"] and "<passage>" not in user["content"]
    assert task.key == "openie_hipporag_ner/query@v1" and NamedEntityExtraction().key == "openie_hipporag_ner@v1"
    assert task.parse('{"named_entities": ["Madame Curie", "madame curie"]}', inputs).value == ["Madame Curie"]
    with pytest.raises(ValueError):
        NamedEntityExtraction(source="claim")


def test_query_ner_keeps_the_kind_of_thing_asked_about():
    """CatRAG's Fig. 1 anchors "Which university did Marie Curie's doctoral advisor attend?" on Marie Curie and
    the university: the prompt asks for the named things *and* the kind of thing asked about, and its worked
    example replies so (issue 29: it used to say to leave out what the question asks for)."""
    system, user = NamedEntityExtraction(source="query").messages({"query": "Which album did Adele release first?"})
    assert "kind of thing the question asks about" in system["content"]
    assert "leave out generic words and what the question asks for" not in system["content"]
    assert '"named_entities": ["Marie Curie", "university"]' in user["content"]


def test_bare_list_reply_is_accepted():
    parsed = NamedEntityExtraction().parse('["Warsaw", "Poland"]', {"passage": "x"})
    assert parsed.value == ["Warsaw", "Poland"]


def test_triples_prompt_shows_entities_and_parse_drops_malformed():
    task = TripleExtraction()
    inputs = {"passage": PASSAGE, "named_entities": ["Marie Curie", "Warsaw"]}
    assert '["Marie Curie", "Warsaw"]' in task.messages(inputs)[1]["content"]
    parsed = task.parse(TRIPLES_RAW, inputs)
    assert parsed.value == [("Marie Curie", "born in", "Warsaw"), ("Marie Curie", "born in", "1867"),
                            ("Marie Curie", "married", "Pierre Curie"), ("Marie Curie", "married in", "1895")]
    assert parsed.dropped_ids == 1  # the two-element triple


def test_triples_missing_key_is_invalid():
    with pytest.raises(OutputInvalid):
        TripleExtraction().parse('{"relations": []}', {"passage": "x", "named_entities": []})
