"""OpenIE, GraphRAG style (used by HugRAG): typed entities with descriptions, and relations between
them with a description and a strength score from 1 to 10.

Following Microsoft GraphRAG's element extraction (Edge et al., 2024): one pass names each entity,
gives it a type from a fixed list and a one-sentence description drawn from the passage, then links
pairs of those entities with a sentence explaining the link and how strong it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import block, json_example
from hyperrag.llm.tasks.base import Name, Task, Text, passage_of

SCHEMA_VERSION = "1"

DEFAULT_TYPES = ("person", "organization", "location", "event", "date", "work", "concept", "other")


class Entity(BaseModel):
    name: Name
    type: Name
    description: Text = ""


class Relation(BaseModel):
    source: Name
    target: Name
    description: Text = ""
    strength: int = Field(5, description="1 (weak, incidental) to 10 (strong, defining)")

    @field_validator("strength", mode="before")
    @classmethod
    def _clamp(cls, v: Any) -> int:
        try:
            return max(1, min(10, round(float(v))))
        except (TypeError, ValueError):
            return 5


class GraphElements(BaseModel):
    entities: list[Entity] = Field(max_length=40)
    relations: list[Relation] = Field(max_length=40)


_EXAMPLE = {
    "entities": [
        {"name": "Lake Ohrid", "type": "location", "description": "Lake on the border of North Macedonia and Albania."},
        {"name": "Struga", "type": "location", "description": "Town on the northern shore of Lake Ohrid."},
    ],
    "relations": [
        {"source": "Struga", "target": "Lake Ohrid", "description": "Struga lies on the lake's northern shore.",
         "strength": 8},
    ],
}


class GraphExtraction(Task):
    """Inputs: ``passage``; optional ``entity_types`` (defaults to :data:`DEFAULT_TYPES`)."""

    name = "openie_graphrag"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = GraphElements
    max_tokens = 1024
    ROLE = (
        "You extract a typed knowledge graph from one passage. First list the entities: for each give its "
        "name as written, one type from the allowed list, and a one-sentence description of what the "
        "passage says about it. Then list relations between pairs of those entities: source and target "
        "must be names from your entity list, the description explains how they are related according to "
        "the passage, and strength is an integer from 1 (weak, incidental) to 10 (strong, defining)."
    )

    def __init__(self, entity_types: Sequence[str] = DEFAULT_TYPES) -> None:
        self.entity_types = tuple(t.lower() for t in entity_types)

    @property
    def variant(self) -> str:
        return "" if self.entity_types == DEFAULT_TYPES else "types=" + ",".join(self.entity_types)

    def user(self, inputs: Mapping[str, Any]) -> str:
        types = inputs.get("entity_types") or self.entity_types
        return (
            f"Allowed entity types: {', '.join(types)}\n"
            f"Example reply: {json_example(_EXAMPLE)}\n\n"
            f"Passage:\n{block('passage', passage_of(inputs))}\n"
            'Reply with {"entities": [...], "relations": [...]} for this passage.'
        )

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        types = set(inputs.get("entity_types") or self.entity_types)
        entities: dict[str, Entity] = {}
        for e in output.entities:  # type: ignore[attr-defined]
            key = e.name.casefold()
            if key not in entities:
                kind = e.type.lower()
                entities[key] = Entity(name=e.name, type=kind if kind in types else "other",
                                       description=e.description)
        relations, dropped, seen = [], 0, set()
        for r in output.relations:  # type: ignore[attr-defined]
            s, t = r.source.casefold(), r.target.casefold()
            if s not in entities or t not in entities or s == t:
                dropped += 1  # endpoints must be entities the reply itself listed
                continue
            if (s, t) in seen:
                continue
            seen.add((s, t))
            relations.append(Relation(source=entities[s].name, target=entities[t].name,
                                      description=r.description, strength=r.strength))
        return GraphElements(entities=list(entities.values()), relations=relations), dropped
