"""HolisQA necessity check: answer a question from the given sentences only, or say it cannot be answered.

The builder asks this with all cited sentences (the answer must be derivable) and again with each cited
sentence left out (it must no longer be): a pair survives only if every cited sentence is necessary.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, field_validator

from hyperrag.llm.prompting import block, make_items, render_items, require
from hyperrag.llm.tasks.base import Task, Text
from hyperrag.llm.tasks.holisqa_generation import sentences_of

SCHEMA_VERSION = "1"


class Attempt(BaseModel):
    answerable: bool
    answer: Text = ""

    @field_validator("answerable", mode="before")
    @classmethod
    def _flag(cls, v: Any) -> Any:
        if isinstance(v, str):
            return v.strip().lower() in ("1", "true", "yes")
        return bool(v)


class HolisQANecessity(Task):
    """Inputs: ``question``, ``sentences`` (strings or ``(key, text)`` pairs).

    ``value``: ``{"answerable": bool, "answer": str}`` (``answer`` is empty when not answerable).
    """

    name = "holisqa_necessity"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Attempt
    max_tokens = 128
    ROLE = (
        "You answer a question strictly from the given sentences, with no outside knowledge and no guessing. "
        "If the sentences state or directly imply the answer, reply answerable: true with a short answer. If "
        "any needed fact is missing, reply answerable: false with an empty answer."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", task=self.name)
        items = make_items(sentences_of(inputs), "S")
        return (f"Sentences:\n{render_items(items, 'item')}\nQuestion:\n{block('data', inputs['question'])}\n"
                'Reply with {"answerable": true | false, "answer": "..."}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        ok = bool(output.answerable)  # type: ignore[attr-defined]
        return {"answerable": ok, "answer": output.answer if ok else ""}  # type: ignore[attr-defined]
