"""Causal pair verification (CDF-RAG, Appendix A.2): is a mined cause → effect pair valid, which way does it run,
and how is it said as one causal statement?

Every pair the pair classifier accepts goes to the LLM with the paper's prompt structure: an instruction setting the
model up as an expert of the domain, contextual metadata (domain, dataset, the model that extracted the pair), the
pair itself (and the sentence it comes from), the task (validity, direction, a one-sentence justification, a
confidence) and a fixed output format. The reply: correctness, the direction (as given or reversed), the pair
rephrased as one fluent causal statement in the right direction, a justification and a High / Medium / Low
confidence. CDF-RAG keeps the rephrased statement in the graph (it is what the generator reads).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from hyperrag.llm.prompting import block, make_items, render_items, require, system_prompt
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "2"
#: the weight a verdict's confidence gives a pair (the graph averages it with the classifier's score)
CONFIDENCE = {"High": 1.0, "Medium": 2 / 3, "Low": 1 / 3}


class PairVerdict(BaseModel):
    correct: bool
    direction: Literal["as_given", "reversed"] = "as_given"
    refined: Text = ""
    justification: Text = ""
    confidence: Literal["High", "Medium", "Low"] = "Medium"

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, v: Any) -> Any:
        s = str(v).strip().lower().replace(" ", "_").replace("-", "_")
        return {"as_is": "as_given", "given": "as_given", "forward": "as_given", "correct": "as_given",
                "reverse": "reversed", "backward": "reversed", "vice_versa": "reversed"}.get(s, s)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, v: Any) -> Any:
        return str(v).strip().capitalize()


class CausalPairVerification(Task):
    """Inputs: ``cause``, ``effect``; optional ``context`` (the sentence(s) the pair comes from), ``domain``,
    ``dataset`` and ``source_model`` (the contextual metadata).

    ``value``: ``{"causal": bool, "direction": "a->b" | "b->a" | None, "confidence": 0..1, "confidence_label":
    "High" | "Medium" | "Low", "statement": str, "justification": str}`` (``a`` = the given cause).
    """

    name = "causal_pair_verification"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = PairVerdict
    max_tokens = 256
    ROLE = (
        "You are a specialist in {domain} who judges cause-and-effect claims by the evidence. A candidate causal "
        "relation was extracted automatically from a document; decide whether it is valid, whether it runs in "
        "the stated direction, and restate it as one clear causal sentence."
    )

    def system(self, inputs: Mapping[str, Any]) -> str:
        return system_prompt(self.ROLE.format(domain=inputs.get("domain") or "the subject of the document"))

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "cause", "effect", task=self.name)
        meta = "\n".join(f"- {label}: {inputs.get(key) or 'unspecified'}" for label, key in
                         (("Domain", "domain"), ("Dataset", "dataset"), ("Extracted by", "source_model")))
        ctx = list(inputs.get("context") or [])
        ctx_txt = f"Source text:\n{render_items(make_items(ctx, 'S'), 'passage')}\n" if ctx else ""
        return (f"About the candidate:\n{meta}\n{ctx_txt}"
                f"Candidate cause:\n{block('node', inputs['cause'], id='C')}\n"
                f"Candidate effect:\n{block('node', inputs['effect'], id='E')}\n"
                "Answer four things: (1) does the cause really bring about the effect (true or false)? "
                "(2) if it does but the other way round, say the direction is reversed; (3) justify the verdict "
                "in one sentence; (4) how confident are you (High, Medium or Low)? Also restate the valid "
                "relation as one fluent sentence with the true cause first.\n"
                'Reply with {"correct": true | false, "direction": "as_given" | "reversed", '
                '"refined": "<cause> causes <effect>", "justification": "...", "confidence": "High" | "Medium" | '
                '"Low"}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        o: PairVerdict = output  # type: ignore[assignment]
        direction = None if not o.correct else ("a->b" if o.direction == "as_given" else "b->a")
        return {"causal": o.correct, "direction": direction, "confidence": CONFIDENCE[o.confidence],
                "confidence_label": o.confidence, "statement": o.refined.strip(), "justification": o.justification}


__all__ = ["CONFIDENCE", "CausalPairVerification", "PairVerdict"]
