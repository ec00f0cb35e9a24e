"""Claim support check: is one claim supported, refuted or not covered by the evidence passages?

The second half of post-hoc verification: the model judges a single claim against passages with
short IDs and cites the passages its verdict rests on (checked against the IDs shown).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids

SCHEMA_VERSION = "1"


class SupportVerdict(BaseModel):
    verdict: Literal["supported", "refuted", "not_enough_info"]
    evidence_ids: IdList = []
    reason: Text = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        s = str(v).strip().lower().replace(" ", "_")
        return {"yes": "supported", "no": "refuted", "nei": "not_enough_info", "unknown": "not_enough_info",
                "insufficient": "not_enough_info"}.get(s, s)


class ClaimSupport(Task):
    """Inputs: ``claim``, ``passages``. ``value``: ``{"verdict": ..., "evidence": [caller keys]}``."""

    name = "claim_support"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = SupportVerdict
    max_tokens = 192
    ROLE = (
        "You fact-check one claim against evidence passages. Answer \"supported\" if the passages state or "
        "directly imply the claim, \"refuted\" if they contradict it, and \"not_enough_info\" otherwise — "
        "do not use outside knowledge. Cite the IDs of the passages your verdict rests on."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "claim", "passages", task=self.name)
        return (f"Passages:\n{render_items(self.items(inputs), 'passage')}\nClaim:\n{block('data', inputs['claim'])}\n"
                'Reply with {"verdict": "supported" | "refuted" | "not_enough_info", "evidence_ids": [...], '
                '"reason": "..."}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.evidence_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        return SupportVerdict(verdict=output.verdict, evidence_ids=kept, reason=output.reason), dropped  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        return {"verdict": output.verdict, "evidence": [keys[i] for i in output.evidence_ids]}  # type: ignore[attr-defined]
