"""Answer relevancy (Ragas' response relevancy): write the questions an answer responds to.

The judge sees only the answer (optionally its context) and writes ``n`` questions it answers, plus whether
the answer is noncommittal ("I don't know", evasive). The metric then embeds the generated questions and
takes their mean cosine to the real question, zeroed for noncommittal answers — an answer that addresses
the question lets the judge reconstruct it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"


class GeneratedQuestions(BaseModel):
    questions: list[Text] = Field(min_length=1, max_length=10)
    noncommittal: bool = False

    @field_validator("noncommittal", mode="before")
    @classmethod
    def _flag(cls, v: Any) -> Any:  # Ragas uses 0/1
        if isinstance(v, str):
            return v.strip().lower() in ("1", "true", "yes")
        return bool(v)


class AnswerRelevancy(Task):
    """Inputs: ``answer``; optional ``n`` (questions, default 3) and ``context`` (text the answer came from).

    ``value``: ``{"questions": [str], "noncommittal": bool}``.
    """

    name = "answer_relevancy"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = GeneratedQuestions
    max_tokens = 256
    ROLE = (
        "You reverse-engineer questions from answers. Given an answer, write questions that this answer "
        "directly responds to — specific, self-contained, each phrased differently. Also judge whether the "
        "answer is noncommittal: evasive, vague or a refusal such as \"I don't know\" or \"the passages do "
        "not say\" (noncommittal: true), or a committed answer (noncommittal: false)."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "answer", task=self.name)
        n = int(inputs.get("n", 3))
        ctx = f"Context:\n{block('data', inputs['context'])}\n" if inputs.get("context") else ""
        return (f"{ctx}Answer:\n{block('data', inputs['answer'])}\n"
                f'Write {n} questions. Reply with {{"questions": ["...", ...], "noncommittal": false}}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        n = int(inputs.get("n", 3))
        seen: set[str] = set()
        qs = [q for q in output.questions if q and not (q.casefold() in seen or seen.add(q.casefold()))]  # type: ignore[attr-defined, func-returns-value]
        return GeneratedQuestions(questions=qs[:n] or list(output.questions[:1]),  # type: ignore[attr-defined]
                                  noncommittal=output.noncommittal), 0  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        return {"questions": list(output.questions), "noncommittal": bool(output.noncommittal)}  # type: ignore[attr-defined]
