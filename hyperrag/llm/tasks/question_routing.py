"""Question routing (HyperRAG §4.2): one retrieval step, or decomposition into sub-questions?

The paper answers "straightforward queries" with a single retrieval and reasoning cycle and decomposes "more complex
questions requiring multi-hop reasoning" into simpler sub-questions retrieved in sequence. The model reads the
question and says which it is; for a multi-hop question it also gives the ordered single-hop sub-questions (a later
one may name an earlier one's answer as ``#1``, ``#2``, ...). A multi-hop verdict with fewer than two
sub-questions is read as single-hop (nothing to decompose).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Name, Task

SCHEMA_VERSION = "1"
#: the most sub-questions a reply may list (the prompt asks for two to five)
MAX_SUB_QUESTIONS = 5


class Route(BaseModel):
    multi_hop: bool
    sub_questions: list[Name] = Field(default_factory=list, max_length=MAX_SUB_QUESTIONS)


class QuestionRouting(Task):
    """Inputs: ``query``. ``value``: the sub-questions of a multi-hop question (two or more), ``[]`` for a
    single-hop one."""

    name = "question_routing"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Route
    max_tokens = 256
    ROLE = (
        "You decide how a question should be researched. If a single lookup of one fact answers it, set multi_hop "
        "to false and give no sub-questions. If answering needs several facts where a later one depends on an "
        "earlier one (a multi-hop question), set multi_hop to true and list two to five ordered single-hop "
        "sub-questions; a later sub-question may refer to the answer of an earlier one as #1, #2, and so on. Do "
        "not answer the question."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", task=self.name)
        return (f"Question:\n{block('data', inputs['query'])}\n"
                'Reply with {"multi_hop": true/false, "sub_questions": ["...", ...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        subs = list(dict.fromkeys(output.sub_questions))  # type: ignore[attr-defined]
        multi = bool(output.multi_hop) and len(subs) >= 2  # type: ignore[attr-defined]
        return Route(multi_hop=multi, sub_questions=subs if multi else []), 0

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[str]:
        return list(output.sub_questions)  # type: ignore[attr-defined]
