"""Answer judge (HyperRAG §4.1's "GPT-Acc"): does a response give the reference answer, in any wording?

String matching misses correct answers phrased differently ("the U.S." for "United States", "in 1994" for
"1994"). The judge reads the question, the reference answer(s) and the response, and says whether the response
gives an answer that means the same as one of the references — not whether it is well written, and not whether
the judge itself knows better. An empty or "unknown" response is never correct.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"


class Verdict(BaseModel):
    correct: bool
    reason: Text = ""


class AnswerJudge(Task):
    """Inputs: ``question``, ``references`` (gold answers and aliases), ``response``. ``value``: ``correct``."""

    name = "answer_judge"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Verdict
    max_tokens = 128
    ROLE = (
        "You grade answers to questions against reference answers. Decide whether the response gives the same "
        "answer as at least one reference, allowing different wording, abbreviations, extra context or a more "
        "complete form (\"Barack Obama\" for \"Obama\", \"May 1994\" for \"1994\" when the question asks for a "
        "year). A response that names a different entity, a different number, several candidates without "
        "choosing, or no answer at all is not correct. Judge only against the references, not your own "
        "knowledge."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "references", "response", task=self.name)
        refs = "\n".join(f"- {r}" for r in inputs["references"])
        return (f"Question:\n{block('data', inputs['question'])}\nReference answers:\n{block('data', refs)}\n"
                f"Response:\n{block('data', inputs['response'])}\n"
                'Reply with {"correct": true/false, "reason": "..."}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> bool:
        return bool(output.correct)  # type: ignore[attr-defined]
