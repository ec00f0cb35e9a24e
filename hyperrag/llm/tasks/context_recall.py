"""Context recall judge (Ragas' definition, used by HugRAG's evaluation, its F.4): which statements of the reference
answer can be attributed to the retrieved context?

The reference answer is split into statements by the caller (one per sentence); the judge marks each one
``attributed`` (the context states or directly implies it) or not. The metric is the attributed share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, filter_ids

SCHEMA_VERSION = "1"


class Attribution(BaseModel):
    attributed_ids: IdList = Field(default_factory=list)


class ContextRecallJudge(Task):
    """Inputs: ``question``, ``context`` (text), ``statements`` (the reference answer's sentences).
    ``value``: per statement, ``True`` when the context supports it."""

    name = "context_recall"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Attribution
    max_tokens = 256
    ROLE = ("You check how much of a reference answer the retrieved context covers. For each numbered statement of "
            "the reference answer, decide whether the context states it or directly implies it. Use only the "
            "context, not your own knowledge. Return the IDs of the statements the context supports.")

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items([str(s) for s in inputs["statements"]], "S")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "context", "statements", task=self.name)
        return (f"Question:\n{block('data', inputs['question'])}\nContext:\n{block('data', inputs['context'])}\n"
                f"Reference answer statements:\n{render_items(self.items(inputs), 'item')}\n"
                'Reply with {"attributed_ids": ["S1", ...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.attributed_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        return Attribution(attributed_ids=kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[bool]:
        chosen = set(output.attributed_ids)  # type: ignore[attr-defined]
        return [it.id in chosen for it in self.items(inputs)]
