"""Causal gate verification (HugRAG, its Fig 9): could one module's content plausibly influence the other's, in
either direction?

Two module summaries are shown as A and B. The model answers "yes" only for a plausible mechanism by which one
could affect the other (directly or indirectly, under some reasonable context) — not for correlation,
co-occurrence or a shared topic — and "no" when unsure.

Prompt forms (``CausalGate(prompts=...)``, HugRAG's ``prompts`` setting):

* ``paper`` (default): Fig 9's message exactly as printed — one user message, A and B the two module summaries as
  plain text after ``A:`` / ``B:``, no system message, no data block, no constrained decoding — and the reply read
  as Fig 9 asks for it: the bare token ``yes`` or ``no`` (case, surrounding quotes, whitespace and a final period
  ignored; anything else is an invalid reply). Fig 9 asks no direction: a gate is undirected (``both``).
* ``paper_json``: Fig 9's text with A and B in ``<node>`` data blocks and our system message — the structured-output
  rule (the one token goes in ``{"answer": "yes" | "no"}``, compiled into a grammar where the backend can) and the
  data rule; a bare token is accepted too.
* ``extended``: our restatement, plus a direction field (``A->B``, ``B->A``, ``both`` or ``none``), so a link is
  recorded with the way it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.prompting import DATA_RULE, JSON_RULE, block, plain, require
from hyperrag.llm.tasks.base import PROMPT_FORMS, Parsed, PromptForm, Task

SCHEMA_VERSION = "2"

#: Fig 9 of the HugRAG paper, verbatim (``{a_text}`` / ``{b_text}``: the two module summaries)
FIG9 = """-Goal-
Given two text snippets A and B, decide whether there is any plausible causal relationship between them (either direction) under some reasonable context.

-Steps-
1. Read A and B, and consider whether one could plausibly influence the other (directly or indirectly).
2. Require a plausible mechanism; ignore mere correlation or co-occurrence.
3. If uncertain or only associative, choose "no".

-Output-
Return exactly one token: 'yes' or 'no'. No extra text.

#####
-Real Data-
A: {a_text}
B: {b_text}
#####
Output:"""
#: ours: where the one token goes under structured output (``paper_json``)
PAPER_FORMAT = 'Put the one token in a JSON object: {"answer": "yes"} or {"answer": "no"}.'


def _yes_no(v: Any) -> Any:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return v.strip().strip("'\"").lower().rstrip(".") if isinstance(v, str) else v


class GateAnswer(BaseModel):
    """Fig 9's reply: the one token."""

    answer: Literal["yes", "no"]

    @field_validator("answer", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        return _yes_no(v)


class GateDecision(BaseModel):
    answer: Literal["yes", "no"]
    direction: Literal["A->B", "B->A", "both", "none"]

    @field_validator("answer", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        return _yes_no(v)

    @field_validator("direction", mode="before")
    @classmethod
    def _norm_direction(cls, v: Any) -> Any:
        if not isinstance(v, str):
            return v
        text = v.strip().replace(" ", "").replace("→", "->").upper()
        return {"A->B": "A->B", "B->A": "B->A", "BOTH": "both", "NONE": "none"}.get(text, v)


class CausalGate(Task):
    """Inputs: ``a_text`` and ``b_text`` (module summaries). ``value``: ``{"gate": bool, "direction": str}`` —
    ``direction`` is ``A->B``, ``B->A`` or ``both`` for a gate (``both`` when a "yes" names none, and always in
    the ``paper`` form), ``none`` otherwise.

    Args:
        prompts: ``paper`` (Fig 9 as printed, a bare token back), ``paper_json`` (Fig 9 in our JSON frame) or
            ``extended`` (ours, with the direction field); see the module docstring.
    """

    name = "causal_gate"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = GateDecision
    max_tokens = 32

    def __init__(self, prompts: PromptForm = "paper") -> None:
        if prompts not in PROMPT_FORMS:
            raise ValueError(f"causal_gate prompts {prompts!r}; expected one of {PROMPT_FORMS}")
        self.prompts = prompts

    @property
    def variant(self) -> str:
        return {"paper": "paper_text", "paper_json": "paper"}.get(self.prompts, "")

    def output_model(self) -> type[BaseModel]:
        return GateDecision if self.prompts == "extended" else GateAnswer

    def system(self, inputs: Mapping[str, Any]) -> str:
        if self.prompts == "paper_json":
            return f"{JSON_RULE} {PAPER_FORMAT}\n{DATA_RULE}"
        return super().system(inputs)
    ROLE = ("You judge whether two pieces of knowledge, A and B, are causally connected. Consider both directions: "
            "could something described in A plausibly influence something described in B, or the other way round, "
            "directly or through intermediate steps, in some reasonable setting? Answer \"yes\" only when you can "
            "see a plausible mechanism. Being correlated, appearing together or sharing a topic is not enough. When "
            "in doubt, or when the link is only associative, answer \"no\". With \"yes\", give the direction "
            "(A->B, B->A or both); with \"no\", the direction is none.")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "a_text", "b_text", task=self.name)
        if self.prompts == "paper":
            return FIG9.format(a_text=plain(inputs["a_text"]), b_text=plain(inputs["b_text"]))
        if self.prompts == "paper_json":
            return FIG9.format(a_text=block("node", inputs["a_text"], id="A"),
                               b_text=block("node", inputs["b_text"], id="B"))
        return (f"A:\n{block('node', inputs['a_text'], id='A')}\nB:\n{block('node', inputs['b_text'], id='B')}\n"
                'Reply with {"answer": "yes" or "no", "direction": "A->B", "B->A", "both" or "none"}.')

    def reply_text(self, reply: Mapping[str, Any]) -> str:
        return str(reply["answer"]) if self.prompts == "paper" else super().reply_text(reply)

    def parse(self, raw: str, inputs: Mapping[str, Any]) -> Parsed:
        """``paper``: the bare token Fig 9 asks for (``yes`` / ``no``), nothing else. ``paper_json``: the JSON
        object, or the bare token when a model replies without JSON."""
        if self.prompts == "paper":
            token = raw.strip().rstrip(".").strip().strip("'\"`").strip().lower()
            if token not in ("yes", "no"):
                raise OutputInvalid(f"causal_gate: Fig 9 asks for one token, 'yes' or 'no'; got {raw[:80]!r}")
            output = GateAnswer(answer=token)
            return Parsed(output, self.interpret(output, inputs), 0, False)
        try:
            return super().parse(raw, inputs)
        except OutputInvalid:
            token = _yes_no(raw.strip())
            if self.prompts != "paper_json" or token not in ("yes", "no"):
                raise
            output = GateAnswer(answer=token)
            return Parsed(output, self.interpret(output, inputs), 0, True)

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        gate = output.answer == "yes"  # type: ignore[attr-defined]
        direction = getattr(output, "direction", "both") if gate else "none"
        return {"gate": gate, "direction": "both" if gate and direction == "none" else direction}
