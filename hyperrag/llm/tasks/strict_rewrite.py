"""Rewrite under strict grounding (CDF-RAG): revise an answer so that it says only what the evidence
supports.

After claim checking, the answer is rewritten against the passages: unsupported or refuted content
is removed or corrected, nothing new is added from outside knowledge, and the supporting passages
are cited by ID (checked against those shown).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids

SCHEMA_VERSION = "1"


class Rewrite(BaseModel):
    answer: Text
    supporting_ids: IdList = []


class StrictRewrite(Task):
    """Inputs: ``question``, ``answer`` (draft), ``passages``; optional ``unsupported_claims``.

    ``value``: ``{"answer": str, "supporting": [caller keys]}``.
    """

    name = "strict_rewrite"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Rewrite
    max_tokens = 384
    ROLE = (
        "You revise a draft answer under strict grounding. Keep only statements the passages support; correct "
        "or remove anything they contradict or do not cover, especially the listed unsupported claims. Add "
        "nothing from outside knowledge. Keep the answer as short as the question allows and cite the IDs "
        "of the passages that support it. If nothing is supported, answer \"unknown\"."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "answer", "passages", task=self.name)
        bad = list(inputs.get("unsupported_claims") or [])
        bad_txt = "Unsupported claims:\n" + "\n".join(block("data", c) for c in bad) + "\n" if bad else ""
        return (f"Passages:\n{render_items(self.items(inputs), 'passage')}\n"
                f"Question:\n{block('data', inputs['question'])}\nDraft answer:\n{block('data', inputs['answer'])}\n"
                f'{bad_txt}Reply with {{"answer": "...", "supporting_ids": ["P..", ...]}}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.supporting_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        return Rewrite(answer=output.answer, supporting_ids=kept), dropped  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        return {"answer": output.answer, "supporting": [keys[i] for i in output.supporting_ids]}  # type: ignore[attr-defined]
