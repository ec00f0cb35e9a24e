"""Entity summary: merge the descriptions an entity collected across passages into one.

Following GraphRAG's description summarisation: the same entity is described by several extraction
calls; one call condenses them into a single coherent, third-person summary that keeps every
distinct fact and resolves contradictions by stating both sides.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"


class Summary(BaseModel):
    summary: Text


class EntitySummary(Task):
    """Inputs: ``entity`` (name) and ``descriptions`` (list of strings); optional ``max_words``."""

    name = "entity_summary"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Summary
    max_tokens = 384
    ROLE = (
        "You write one concise, factual summary of an entity from several descriptions of it. Keep every "
        "distinct fact, remove repetition, write in the third person and name the entity. If descriptions "
        "contradict each other, say so briefly instead of choosing one. Use only the given descriptions."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "entity", "descriptions", task=self.name)
        descs = "\n".join(block("data", d) for d in inputs["descriptions"])
        words = int(inputs.get("max_words", 80))
        return (f"Entity: {block('data', inputs['entity'])}\nDescriptions:\n{descs}\n"
                f'Reply with {{"summary": "..."}} in at most {words} words.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> str:
        return output.summary  # type: ignore[attr-defined]
