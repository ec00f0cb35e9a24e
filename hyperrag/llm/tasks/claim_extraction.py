"""Claim extraction: split a generated answer into atomic, self-contained factual claims.

The first half of post-hoc verification (CDF-RAG's hallucination check, FActScore-style): each
claim states one checkable fact, with pronouns resolved so it can be verified on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"


class Claims(BaseModel):
    claims: list[Text] = Field(max_length=20)


class ClaimExtraction(Task):
    """Inputs: ``text`` (the answer); optional ``question`` (resolves elliptic answers)."""

    name = "claim_extraction"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Claims
    max_tokens = 512
    ROLE = (
        "You split a text into atomic factual claims. Each claim is one short declarative sentence stating a "
        "single checkable fact, understandable on its own (replace pronouns with names; if the text is a bare "
        "answer, combine it with the question). Skip opinions, hedges and repeated facts."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "text", task=self.name)
        q = f"Question:\n{block('data', inputs['question'])}\n" if inputs.get("question") else ""
        return f'{q}Text:\n{block("data", inputs["text"])}\nReply with {{"claims": [...]}}.'

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        seen: set[str] = set()
        out = [c for c in output.claims if c and not (c.casefold() in seen or seen.add(c.casefold()))]  # type: ignore[attr-defined, func-returns-value]
        return Claims(claims=out), 0

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[str]:
        return list(output.claims)  # type: ignore[attr-defined]
