"""Causal gate verification (HugRAG, its Fig 9): could one module's content plausibly influence the other's, in
either direction?

Two module summaries are shown as A and B. The model answers "yes" only for a plausible mechanism by which one
could affect the other (directly or indirectly, under some reasonable context) — not for correlation,
co-occurrence or a shared topic — and "no" when unsure. A "yes" names its direction (``A->B``, ``B->A`` or
``both``), so a link is found whichever module happens to be shown first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Task

SCHEMA_VERSION = "2"


class GateDecision(BaseModel):
    answer: Literal["yes", "no"]
    direction: Literal["A->B", "B->A", "both", "none"]

    @field_validator("answer", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return "yes" if v else "no"
        return v.strip().lower().rstrip(".") if isinstance(v, str) else v

    @field_validator("direction", mode="before")
    @classmethod
    def _norm_direction(cls, v: Any) -> Any:
        if not isinstance(v, str):
            return v
        text = v.strip().replace(" ", "").replace("→", "->").upper()
        return {"A->B": "A->B", "B->A": "B->A", "BOTH": "both", "NONE": "none"}.get(text, v)


class CausalGate(Task):
    """Inputs: ``a_text`` and ``b_text`` (module summaries). ``value``: ``{"gate": bool, "direction": str}`` —
    ``direction`` is ``A->B``, ``B->A`` or ``both`` for a gate (``both`` when a "yes" names none), ``none``
    otherwise."""

    name = "causal_gate"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = GateDecision
    max_tokens = 32
    ROLE = ("You judge whether two pieces of knowledge, A and B, are causally connected. Consider both directions: "
            "could something described in A plausibly influence something described in B, or the other way round, "
            "directly or through intermediate steps, in some reasonable setting? Answer \"yes\" only when you can "
            "see a plausible mechanism. Being correlated, appearing together or sharing a topic is not enough. When "
            "in doubt, or when the link is only associative, answer \"no\". With \"yes\", give the direction "
            "(A->B, B->A or both); with \"no\", the direction is none.")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "a_text", "b_text", task=self.name)
        return (f"A:\n{block('node', inputs['a_text'], id='A')}\nB:\n{block('node', inputs['b_text'], id='B')}\n"
                'Reply with {"answer": "yes" or "no", "direction": "A->B", "B->A", "both" or "none"}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        gate = output.answer == "yes"  # type: ignore[attr-defined]
        direction = output.direction if gate else "none"  # type: ignore[attr-defined]
        return {"gate": gate, "direction": "both" if gate and direction == "none" else direction}
