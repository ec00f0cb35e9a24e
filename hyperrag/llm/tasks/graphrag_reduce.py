"""GraphRAG global search, reduce step: the analysts' scored key points → one answer to the question.

Following GraphRAG's reduce prompt: the points from every analyst come ranked by importance (highest first,
score-0 points already dropped); the model removes what does not bear on the question, merges the rest into
one response of the requested length and format, keeps the points' references, never mentions the analysts,
says it does not know when the points do not hold the answer and makes nothing up. For question answering the
requested format is a short answer; the references are the IDs of the points the answer rests on, checked
against those shown. No gold exists for summarised points: the oracle fails this task (``no_gold``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids

SCHEMA_VERSION = "1"


class ReducedAnswer(BaseModel):
    answer: Text
    supporting_ids: IdList = []


class GraphRAGReduce(Task):
    """Inputs: ``question``, ``points`` ((key, text) pairs, text starting with the point's importance score,
    most important first), ``response_type`` (the answer's length and format), optional ``max_words``.

    ``value``: ``{"answer": str, "supporting": [caller keys]}``.
    """

    name = "graphrag_reduce"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = ReducedAnswer
    max_tokens = 512
    ROLE = (
        "You write the answer to a user's question about a dataset by combining key points that several "
        "analysts wrote, each about a different part of the dataset. The points are listed from most to least "
        "important. Leave out everything that does not bear on the question, merge what remains into one "
        "response of the requested length and format, and do not mention the analysts. List the IDs of the "
        "points your answer rests on. If the points do not contain the answer, say that you do not know; "
        "never make anything up."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["points"]), "A")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "points", "response_type", task=self.name)
        words = int(inputs.get("max_words", 200))
        return (f"Analyst points:\n{render_items(self.items(inputs), 'item')}\n"
                f"Question:\n{block('data', inputs['question'])}\n"
                f"Response length and format: {inputs['response_type']} (at most {words} words).\n"
                'Reply with {"answer": "...", "supporting_ids": ["A..", ...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.supporting_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        return ReducedAnswer(answer=output.answer, supporting_ids=kept), dropped  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        return {"answer": output.answer,  # type: ignore[attr-defined]
                "supporting": [keys[i] for i in output.supporting_ids]}  # type: ignore[attr-defined]
