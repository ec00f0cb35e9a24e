"""Passage relations (HyperRAG §3.1.2): how passages relate *in answering one question*.

The model sees the question and a handful of passages it judged helpful (short IDs) and names the pairs that
work together towards the answer, with one of the paper's three relation types:

* ``support`` — the two passages back the same step of the answer (corroborate each other);
* ``complement`` — each holds a different piece that the answer needs (e.g. one names an entity, the other
  says something about it);
* ``expand`` — the target goes further from what the source establishes (the next step of the reasoning).

The link is directed ``source → target`` (the step taken first → the one it leads to), which is how the
query tree is hung together. Both endpoints are checked against the IDs shown; self-links and duplicates are
dropped. A relation whose type is none of the three (after common spellings such as *supports* or *complementary*)
is an invalid answer: dropped and counted (``dropped_ids``), never guessed as another type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import Task, Text, filter_ids

SCHEMA_VERSION = "3"

RelationType = Literal["support", "complement", "expand"]
RELATION_TYPES = ("support", "complement", "expand")
# words a model may use for one of the three types
_SYNONYMS = {"supports": "support", "supporting": "support", "corroborates": "support",
             "complements": "complement", "complementary": "complement",
             "expands": "expand", "expands_upon": "expand", "expand_upon": "expand", "elaborates": "expand"}


def relation_type(value: Any) -> str | None:
    """One of :data:`RELATION_TYPES` for a model's spelling of it, or ``None`` (an unknown type)."""
    v = str(value).strip().lower().replace(" ", "_").replace("-", "_")
    v = _SYNONYMS.get(v, v)
    return v if v in RELATION_TYPES else None


class PassageLink(BaseModel):
    source_id: str = Field(max_length=40)
    target_id: str = Field(max_length=40)
    type: RelationType
    description: Text = ""

    @field_validator("type", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        return relation_type(v) or v  # an unknown type fails validation (prevalidate drops and counts it first)


class PassageLinks(BaseModel):
    relations: list[PassageLink] = Field(max_length=64)


class PassageRelations(Task):
    """Inputs: ``query`` (the question), ``passages``. ``value``: ``(source_key, target_key, type, description)``."""

    name = "passage_relations"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = PassageLinks
    max_tokens = 768
    ROLE = (
        "You map how evidence fits together for one question. You get the question and passages that were "
        "judged useful for it, each with an ID. Name every pair of passages that work together in answering "
        "that question, directed from the passage a reader would use first to the one it leads to, with one "
        "type: support (both back the same step of the answer), complement (each holds a different piece the "
        "answer needs, such as an entity in one and a fact about it in the other) or expand (the target goes "
        "on from what the source establishes, the next step of the reasoning). Add a few words saying how. "
        "Leave out pairs whose link does not matter for this question, such as passages that merely share "
        "a topic or a word. For example, for \"In which country was the architect of the Sydney Opera House "
        "born?\", a passage naming Jørn Utzon as the architect and a passage giving Utzon's birthplace form "
        "one pair of type expand."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "passages", task=self.name)
        return (f"Question:\n{block('data', inputs['query'])}\nPassages:\n"
                f"{render_items(self.items(inputs), 'passage')}\n"
                'Reply with {"relations": [{"source_id": "P1", "target_id": "P2", "type": '
                '"support|complement|expand", "description": "..."}, ...]} (an empty list when no pair matters).')

    def prevalidate(self, value: dict[str, Any], inputs: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        """Relations of an unknown type are invalid answers: dropped, and counted."""
        rels = value.get("relations")
        if not isinstance(rels, list):
            return value, 0
        kept = [r for r in rels if not isinstance(r, dict) or relation_type(r.get("type")) is not None]
        return {**value, "relations": kept}, len(rels) - len(kept)

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        kept, dropped, seen = [], 0, set()
        for r in output.relations:  # type: ignore[attr-defined]
            src, b1 = filter_ids([r.source_id], shown)
            dst, b2 = filter_ids([r.target_id], shown)
            if b1 or b2 or src[0] == dst[0]:
                dropped += 1
                continue
            if (src[0], dst[0], r.type) not in seen:
                seen.add((src[0], dst[0], r.type))
                kept.append(PassageLink(source_id=src[0], target_id=dst[0], type=r.type, description=r.description))
        return PassageLinks(relations=kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[tuple[Any, Any, str, str]]:
        keys = key_map(self.items(inputs))
        return [(keys[r.source_id], keys[r.target_id], r.type, r.description)
                for r in output.relations]  # type: ignore[attr-defined]
