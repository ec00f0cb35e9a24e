"""Structured outputs: schema payload per declared capability, lenient parsing, strict validation, IDs."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.structured import IdChecker, inline_schema, parse_output, response_format_body
from hyperrag.llm.tasks import get_task, task_names


class Ents(BaseModel):
    named_entities: list[str]


@pytest.mark.parametrize("raw", [
    '{"named_entities": ["Paris", "France"]}',
    '```json\n{"named_entities": ["Paris", "France"]}\n```',
    'Sure! Here you go: {"named_entities": ["Paris", "France"]} Hope it helps.',
    "{'named_entities': ['Paris', 'France']}",
    '{"named_entities": ["Paris", "France",]}',
    '{"named_entities": ["Paris", "France"',
    '["Paris", "France"]',
    '<think>the user wants entities</think>{"named_entities": ["Paris", "France"]}',
])
def test_near_json_is_repaired_and_validated(raw):
    out, repaired = parse_output(raw, Ents)
    assert out.named_entities == ["Paris", "France"]
    assert repaired == (raw != '{"named_entities": ["Paris", "France"]}' and not raw.startswith(("[", "<think>")))


@pytest.mark.parametrize("raw", ["", "I'm sorry, I can't help with that.", '{"entities": 3}',
                                 '{"named_entities": "Paris"}', "<html>502</html>"])
def test_garbage_or_wrong_schema_is_invalid(raw):
    with pytest.raises(OutputInvalid):
        parse_output(raw, Ents)


def test_every_task_schema_is_flat_and_fully_required():
    for name in task_names():
        schema = get_task(name).schema()
        text = json.dumps(schema)
        assert "$ref" not in text and "$defs" not in text, name
        assert schema["type"] == "object" and set(schema["required"]) == set(schema["properties"]), name


def test_inline_schema_resolves_nested_models():
    class Inner(BaseModel):
        a: int

    class Outer(BaseModel):
        items: list[Inner]

    s = inline_schema(Outer)
    assert s["properties"]["items"]["items"]["properties"]["a"]["type"] == "integer"


def test_response_format_chosen_by_declared_mode():
    schema = {"type": "object"}
    assert response_format_body("json_schema", schema, "fact_filter")["response_format"]["json_schema"]["schema"] is schema
    assert response_format_body("guided_json", schema, "x") == {"guided_json": schema}
    assert response_format_body("structured_outputs", schema, "x") == {"structured_outputs": {"json": schema}}
    assert response_format_body("json_object_schema", schema, "x") == {
        "response_format": {"type": "json_object", "schema": schema}}
    assert response_format_body("json_object", schema, "x") == {"response_format": {"type": "json_object"}}
    assert response_format_body("none", schema, "x") == {}
    with pytest.raises(ValueError):
        response_format_body("guess_from_model_name", schema, "x")


def test_id_checker_normalises_and_counts_unknown():
    chk = IdChecker(["F1", "F2", "F10"])
    kept, dropped = chk.filter(["f1", "[F2]", "F10: Paris is in France", "F1", "F3", 7, "Z999", " F2 "])
    assert kept == ["F1", "F2", "F10"]
    assert dropped == 3  # F3, 7, Z999 were never shown; duplicates are not counted as dropped
