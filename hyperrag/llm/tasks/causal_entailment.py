"""Causal graph check (CDF-RAG §2.4): does a generated response maintain each retrieved causal relation?

``S_causal = 1/|C_graph| · Σ_(C,E) 𝕀(C → E ⊨ ŷ)``: for every retrieved cause → effect pair the model judges the
*response* — whether it keeps the relation (states or relies on it in that direction), contradicts it (denies it
or reverses its direction), or does not address it. One call per response judges all of its pairs (batched).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import block, make_items, render_items, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"
VERDICTS = ("maintained", "contradicted", "not_addressed")


class PairJudgement(BaseModel):
    id: str
    verdict: Literal["maintained", "contradicted", "not_addressed"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        s = str(v).strip().lower().replace(" ", "_").replace("-", "_")
        return {"entailed": "maintained", "kept": "maintained", "yes": "maintained", "reversed": "contradicted",
                "violated": "contradicted", "no": "contradicted", "not_stated": "not_addressed",
                "absent": "not_addressed", "unaddressed": "not_addressed"}.get(s, s)


class Judgements(BaseModel):
    judgements: list[PairJudgement] = Field(max_length=64)
    reason: Text = ""


class CausalEntailment(Task):
    """Inputs: ``question``, ``answer`` (the generated response ŷ), ``pairs`` (``(cause, effect)`` tuples or
    causal statements).

    ``value``: one verdict per pair, in order (``maintained`` | ``contradicted`` | ``not_addressed``); a pair the
    reply leaves out counts as ``not_addressed`` (reported as dropped).
    """

    name = "causal_entailment"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Judgements
    max_tokens = 384
    ROLE = (
        "You check a generated answer against cause-and-effect relations that were retrieved for its question. "
        "For each relation, read only the answer and decide: \"maintained\" when the answer states the "
        "relation or clearly relies on it with the cause and effect the right way round; \"contradicted\" when "
        "the answer denies it or turns the direction around; \"not_addressed\" when the answer says nothing about "
        "it. Judge what the answer says, not whether the relation is true."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        pairs = [p if isinstance(p, str) else f"{p[0]} → {p[1]}" for p in inputs["pairs"]]
        return make_items(pairs, "C")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "answer", "pairs", task=self.name)
        return (f"Question:\n{block('data', inputs['question'])}\nAnswer:\n{block('data', inputs['answer'])}\n"
                f"Causal relations (cause → effect):\n{render_items(self.items(inputs), 'fact')}\n"
                'Reply with {"judgements": [{"id": "C1", "verdict": "maintained" | "contradicted" | '
                '"not_addressed"}, ...], "reason": "..."} — one judgement per relation.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        by_id: dict[str, PairJudgement] = {}
        dropped = 0
        for j in output.judgements:  # type: ignore[attr-defined]
            if j.id in shown and j.id not in by_id:
                by_id[j.id] = j
            else:
                dropped += 1
        dropped += sum(i not in by_id for i in shown)
        kept = [by_id.get(i) or PairJudgement(id=i, verdict="not_addressed") for i in shown]
        return Judgements(judgements=kept, reason=output.reason), dropped  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[str]:
        return [j.verdict for j in output.judgements]  # type: ignore[attr-defined]


__all__ = ["VERDICTS", "CausalEntailment", "Judgements", "PairJudgement"]
