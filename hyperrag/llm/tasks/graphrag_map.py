"""GraphRAG global search, map step: one batch of community reports → scored key points for the question.

Following GraphRAG's map prompt: the model acts as one analyst over one batch of community reports, lists the
key points that respond to the question, each with a comprehensive description, the reports that support it
(at most 5, the most relevant) and an importance score from 0 to 100 (an "I don't know" point scores 0); it
states nothing the reports do not support, keeps the sources' modal verbs, and stays within a word limit.
GraphRAG writes the report references into the description text; here they are a field whose IDs are checked
against the reports shown. Points have no gold (the oracle fails this task with ``no_gold``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids

SCHEMA_VERSION = "1"
MAX_REFERENCES = 5


class KeyPoint(BaseModel):
    description: Text
    score: int = Field(ge=0, le=100)
    report_ids: IdList = []


class MapPoints(BaseModel):
    points: list[KeyPoint] = Field(default_factory=list, max_length=10)


class GraphRAGMap(Task):
    """Inputs: ``question``, ``reports`` ((key, text) pairs or strings), optional ``max_words``.

    ``value``: ``[{"description": str, "score": int, "reports": [caller keys]}]`` in the model's order.
    """

    name = "graphrag_map"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = MapPoints
    max_tokens = 768
    ROLE = (
        "You are one of several analysts; each reads a different batch of community reports that summarise "
        "parts of a knowledge graph. From your reports only, list the key points that respond to the user's "
        "question. Give each point a full description, the IDs of the reports that support it (at most 5, "
        "the most relevant ones) and an importance score: an integer from 0 to 100 saying how much the point "
        "helps answer the question. If your reports do not help, return one point saying so, with score 0. "
        "Never state anything your reports do not support, and keep modal verbs such as \"shall\", \"may\" "
        "or \"will\" as the reports use them."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["reports"]), "R")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "reports", task=self.name)
        words = int(inputs.get("max_words", 500))
        return (f"Community reports:\n{render_items(self.items(inputs), 'item')}\n"
                f"Question:\n{block('data', inputs['question'])}\n"
                f"Use at most {words} words in all. Reply with "
                '{"points": [{"description": "...", "score": 0-100, "report_ids": ["R..", ...]}, ...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        points, dropped = [], 0
        for p in output.points:  # type: ignore[attr-defined]
            kept, bad = filter_ids(p.report_ids, shown)
            dropped += bad
            points.append(KeyPoint(description=p.description, score=p.score, report_ids=kept[:MAX_REFERENCES]))
        return MapPoints(points=points), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        keys = key_map(self.items(inputs))
        return [{"description": p.description, "score": int(p.score), "reports": [keys[i] for i in p.report_ids]}
                for p in output.points]  # type: ignore[attr-defined]
