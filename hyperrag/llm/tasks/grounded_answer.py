"""Grounded answer: answer a question from retrieved passages only, citing them by ID.

The reader step of every method: passages are shown with short IDs (``P1``...), the model writes a
short answer (an entity, date or phrase, as multi-hop QA benchmarks expect) and the IDs of the
passages that support it; cited IDs are checked against those shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids

SCHEMA_VERSION = "1"


class Answer(BaseModel):
    answer: Text
    supporting_ids: IdList = []


class GroundedAnswer(Task):
    """Inputs: ``question``, ``passages`` (strings, (key, text) pairs, mappings or Passages).

    ``value``: ``{"answer": str, "supporting": [caller keys]}``.
    """

    name = "grounded_answer"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Answer
    max_tokens = 256
    ROLE = (
        "You answer questions using only the given passages. Reason across passages when the question needs "
        "several steps. Give a short answer: the entity, date, number or phrase asked for, not a sentence. "
        "List the IDs of the passages that support the answer. If the passages do not contain the answer, "
        "give your best short guess and an empty supporting_ids list."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "passages", task=self.name)
        return (f"Passages:\n{render_items(self.items(inputs), 'passage')}\n"
                f"Question:\n{block('data', inputs['question'])}\n"
                'Reply with {"answer": "...", "supporting_ids": ["P..", ...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.supporting_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        return Answer(answer=output.answer, supporting_ids=kept), dropped  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        return {"answer": output.answer, "supporting": [keys[i] for i in output.supporting_ids]}  # type: ignore[attr-defined]
