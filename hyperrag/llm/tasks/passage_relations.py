"""Passage relations (HyperRAG): typed links between passages, used as hyperedges/edges.

Given a handful of passages with short IDs, the model names pairs that are related and how — the
same entity seen from two sides, one elaborating another, a cause and its effect, a temporal
sequence, or a contradiction. Both endpoints are checked against the IDs shown; self-links and
duplicates are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import Task, Text, filter_ids

SCHEMA_VERSION = "1"

RelationType = Literal["same_entity", "elaborates", "causes", "precedes", "contradicts", "related"]
RELATION_TYPES = ("same_entity", "elaborates", "causes", "precedes", "contradicts", "related")


class PassageLink(BaseModel):
    source_id: str = Field(max_length=40)
    target_id: str = Field(max_length=40)
    type: RelationType
    description: Text = ""

    @field_validator("type", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        v = str(v).strip().lower().replace(" ", "_").replace("-", "_")
        return v if v in RELATION_TYPES else "related"


class PassageLinks(BaseModel):
    relations: list[PassageLink] = Field(max_length=64)


class PassageRelations(Task):
    """Inputs: ``passages``. ``value``: list of ``(source_key, target_key, type, description)``."""

    name = "passage_relations"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = PassageLinks
    max_tokens = 768
    ROLE = (
        "You find links between passages. For each pair of passages that are meaningfully connected, give "
        "their IDs, a link type and a short description. Types: same_entity (both describe the same "
        "entity), elaborates (target adds detail to source), causes (something in source causes or enables "
        "something in target), precedes (source happens before target), contradicts, related (any other "
        "substantive link). Skip pairs that only share common words."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "passages", task=self.name)
        return (f"Passages:\n{render_items(self.items(inputs), 'passage')}\n"
                'Reply with {"relations": [{"source_id": "P1", "target_id": "P2", "type": "...", '
                '"description": "..."}, ...]}.')

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
