"""Causal gate verification (HugRAG): does knowledge in one module causally bear on another?

HugRAG links modules of its hierarchy with *gates* and keeps a candidate gate only when an LLM
judges that the source plausibly causes, enables or explains something in the target — not mere
topical similarity. One yes/no decision with a one-sentence reason per candidate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"


class GateDecision(BaseModel):
    answer: Literal["yes", "no"]
    reason: Text = ""

    @field_validator("answer", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return "yes" if v else "no"
        return v.strip().lower().rstrip(".") if isinstance(v, str) else v


class CausalGate(Task):
    """Inputs: ``source`` and ``target`` (module summaries or node descriptions); optional
    ``evidence`` (text linking them, e.g. the relation that suggested the gate)."""

    name = "causal_gate"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = GateDecision
    max_tokens = 160
    ROLE = (
        "You verify candidate causal links in a knowledge graph. Given a SOURCE and a TARGET description, "
        "answer \"yes\" only if something described in SOURCE plausibly causes, enables, prevents or directly "
        "explains something described in TARGET. Answer \"no\" when they are merely related, similar, "
        "co-occurring or about the same topic. Give a one-sentence reason."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "source", "target", task=self.name)
        ev = f"Evidence:\n{block('data', inputs['evidence'])}\n" if inputs.get("evidence") else ""
        return (f"SOURCE:\n{block('node', inputs['source'], id='SOURCE')}\n"
                f"TARGET:\n{block('node', inputs['target'], id='TARGET')}\n{ev}"
                'Reply with {"answer": "yes" or "no", "reason": "..."}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> bool:
        return output.answer == "yes"  # type: ignore[attr-defined]
