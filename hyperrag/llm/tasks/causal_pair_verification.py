"""Causal pair verification (CDF-RAG): is there a causal relation between A and B, and which way?

CDF-RAG builds a causal graph from candidate (cause, effect) pairs mined from text and verifies each
with an LLM: a relation label in one of three values (A causes B, B causes A, none), a 0–10
confidence and a short reason, optionally judged against supporting passages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from hyperrag.llm.prompting import block, make_items, render_items, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"


class CausalVerdict(BaseModel):
    relation: Literal["a_causes_b", "b_causes_a", "none"]
    confidence: int = 5
    reason: Text = ""

    @field_validator("relation", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        s = str(v).strip().lower().replace(" ", "_").replace("->", "_causes_").replace("__", "_")
        aliases = {"a_to_b": "a_causes_b", "b_to_a": "b_causes_a", "no": "none", "neither": "none",
                   "no_causal_relation": "none"}
        return aliases.get(s, s)

    @field_validator("confidence", mode="before")
    @classmethod
    def _clamp(cls, v: Any) -> int:
        try:
            return max(0, min(10, round(float(v))))
        except (TypeError, ValueError):
            return 5

    @property
    def is_causal(self) -> bool:
        return self.relation != "none"


class CausalPairVerification(Task):
    """Inputs: ``a``, ``b`` (event/entity descriptions); optional ``context`` (passages).

    ``value``: ``{"causal": bool, "direction": "a->b" | "b->a" | None, "confidence": 0..1}``.
    """

    name = "causal_pair_verification"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = CausalVerdict
    max_tokens = 192
    ROLE = (
        "You verify causal relations. Given two events or factors A and B, decide whether one causes the other: "
        "\"a_causes_b\", \"b_causes_a\", or \"none\" when they are only correlated, share a common cause, or are "
        "unrelated. Rate your confidence from 0 to 10 and give a one-sentence reason. When context passages "
        "are given, judge by them."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "a", "b", task=self.name)
        ctx = list(inputs.get("context") or [])
        ctx_txt = f"Context:\n{render_items(make_items(ctx, 'P'), 'passage')}\n" if ctx else ""
        return (f"A:\n{block('node', inputs['a'], id='A')}\nB:\n{block('node', inputs['b'], id='B')}\n{ctx_txt}"
                'Reply with {"relation": "a_causes_b" | "b_causes_a" | "none", "confidence": 0-10, "reason": "..."}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        rel = output.relation  # type: ignore[attr-defined]
        direction = {"a_causes_b": "a->b", "b_causes_a": "b->a"}.get(rel)
        return {"causal": direction is not None, "direction": direction,
                "confidence": output.confidence / 10.0}  # type: ignore[attr-defined]
