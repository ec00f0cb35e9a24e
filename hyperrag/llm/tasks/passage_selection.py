"""Passage selection (HyperRAG): choose which retrieved passages to keep for a question.

HyperRAG's LLM-in-the-loop retrieval prunes the candidate pool before expanding it (§3.1.2: the LLM evaluates
"which of these passages are potentially helpful for answering the query"): the model sees the question and
candidate passages with short IDs and returns the potentially helpful ones, best first. A cap (``max_selected``)
is stated only when the caller sets one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, filter_ids

SCHEMA_VERSION = "2"


class Selection(BaseModel):
    selected_ids: IdList


class PassageSelection(Task):
    """Inputs: ``query``, ``passages``; optional ``max_selected``. ``value``: caller keys, best first."""

    name = "passage_selection"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Selection
    max_tokens = 192
    ROLE = (
        "You select evidence for a question. Each passage has an ID. Return the IDs of the passages that are "
        "potentially helpful for answering the question, including passages with an intermediate fact of a "
        "multi-step answer, best first. Leave out passages that only share words with the question."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "passages", task=self.name)
        cap = f" Select at most {int(inputs['max_selected'])}." if inputs.get("max_selected") else ""
        return (f"Question:\n{block('data', inputs['query'])}\nPassages:\n"
                f"{render_items(self.items(inputs), 'passage')}\n"
                f'Reply with {{"selected_ids": ["P..", ...]}}.{cap}')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.selected_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        cap = int(inputs["max_selected"]) if inputs.get("max_selected") else None
        return Selection(selected_ids=kept[:cap]), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[Any]:
        keys = key_map(self.items(inputs))
        return [keys[i] for i in output.selected_ids]  # type: ignore[attr-defined]
