"""Regeneration under strict grounding (CDF-RAG §2.4–2.5): revise an answer so that it says only what the evidence
supports.

Two modes, one per check that can send an answer back:

* ``claims`` (the hallucination check, §2.5 "knowledge rewriting"): the listed unsupported claims are removed or
  corrected, nothing new is added from outside knowledge;
* ``causal`` (the causal graph check, §2.4 "fallback generation"): the cause → effect relations of its evidence the
  draft already keeps are listed to be **kept as they are**, the ones it leaves out are listed as **missing** (to be
  accounted for where they bear on the question), the ones it states the wrong way round as **to correct**. The
  model is never told to drop a relation the evidence supports.

Both cite the supporting passages by ID (checked against those shown). The answer style is the run's
(``answer_style``): ``short`` (the bare answer) or ``explanatory`` (an explanation plus ``short_answer``, the bare
entity / date / phrase EM and F1 score), as :class:`~hyperrag.llm.tasks.grounded_answer.GroundedAnswer` does.

Multiple choice: with ``options`` in the inputs the revised answer must be one of them (shown lettered, answered
with a letter); ``value["answer"]`` is the option's text, ``value["option"]`` its position.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from hyperrag.llm.prompting import block, render_items, require, system_prompt
from hyperrag.llm.tasks.answer_style import AnswerStyle
from hyperrag.llm.tasks.grounded_answer import GroundedAnswer, options_of
from hyperrag.utils.answers import option_letter

SCHEMA_VERSION = "2"

RewriteMode = Literal["claims", "causal"]
REWRITE_MODES: tuple[str, ...] = ("claims", "causal")


class StrictRewrite(GroundedAnswer):
    """Inputs: ``question``, ``answer`` (draft), ``passages``; optional ``options``; mode ``claims``:
    ``unsupported_claims``; mode ``causal``: ``keep``, ``missing``, ``contradicted`` (relation statements).

    ``value``: as :class:`GroundedAnswer`'s — ``{"answer", "supporting"}`` (+ ``short_answer`` when explanatory,
    + ``option`` with options).
    """

    name = "strict_rewrite"
    SCHEMA_VERSION = SCHEMA_VERSION
    SHORT_MAX_TOKENS = 384  # a rewrite keeps its citations; the explanatory budget is StyledAnswer's 768
    ROLE = (
        "You revise a draft answer under strict grounding. Keep only statements the passages support; correct "
        "or remove anything they contradict or do not cover, especially the listed unsupported claims. Add "
        "nothing from outside knowledge. Keep the answer as short as the question allows and cite the IDs "
        "of the passages that support it. If nothing is supported, answer \"unknown\"."
    )
    CAUSAL_ROLE = (
        "You revise a draft answer under strict grounding so that it agrees with the cause-and-effect relations of "
        "its evidence. Keep every relation listed under \"Relations to keep\" exactly as the draft states it: do not "
        "drop, weaken or reverse any of them. Where a relation listed under \"Missing relations\" bears on the "
        "question, state it with its cause and effect the right way round. Correct every relation listed under "
        "\"Relations to correct\" so that its direction agrees with the evidence. Add nothing the passages do not "
        "support, and cite the IDs of the passages that support the answer."
    )
    SHORT_RULE = "Give a short answer: the entity, date, number or phrase asked for, not a sentence."
    EXPLANATORY_RULE = (
        "Write the answer as an explanation grounded in the passages, as long as the question needs (usually two to "
        "four sentences), and give short_answer: the bare entity, date, number or phrase the question asks for, "
        "not a sentence."
    )
    OPTIONS_RULE = ("When answer options are listed, the answer must be exactly one of them: pick the option the "
                    "passages support best and give its letter")

    def __init__(self, style: AnswerStyle = "short", mode: RewriteMode = "claims") -> None:
        super().__init__(style)
        if mode not in REWRITE_MODES:
            raise ValueError(f"strict_rewrite mode must be one of {REWRITE_MODES}, got {mode!r}")
        self.mode = mode

    @property
    def variant(self) -> str:
        return "/".join(v for v in ("" if self.mode == "claims" else self.mode, super().variant) if v)

    def system(self, inputs: Mapping[str, Any]) -> str:
        parts = [self.CAUSAL_ROLE if self.mode == "causal" else self.ROLE]
        if self.mode == "causal" or self.explanatory:  # the claims mode's short prompt is unchanged (cached replies)
            parts.append(self.EXPLANATORY_RULE if self.explanatory else self.SHORT_RULE)
        if options_of(inputs):
            where = " (in short_answer)." if self.explanatory else "."
            parts.append(self.OPTIONS_RULE + where)
        return system_prompt(" ".join(parts))

    def _listing(self, title: str, statements: list[str]) -> str:
        return f"{title}:\n" + "\n".join(block("data", s) for s in statements) + "\n" if statements else ""

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "answer", "passages", task=self.name)
        if self.mode == "causal":
            lists = (self._listing("Relations to keep", list(inputs.get("keep") or []))
                     + self._listing("Missing relations", list(inputs.get("missing") or []))
                     + self._listing("Relations to correct", list(inputs.get("contradicted") or [])))
        else:
            lists = self._listing("Unsupported claims", list(inputs.get("unsupported_claims") or []))
        options = options_of(inputs)
        opt_txt = ""
        letter = ""
        if options:
            lettered = "\n".join(f"{option_letter(i)}. {o}" for i, o in enumerate(options))
            opt_txt = f"Options:\n{block('data', lettered)}\n"
            letter = f'"<one letter, A to {option_letter(len(options) - 1)}>"'
        shown = letter or '"..."'
        if self.explanatory:
            reply = (f'{{"answer": "<the explanation>", "short_answer": {shown}, '
                     f'"supporting_ids": ["P..", ...]}}')
        else:
            reply = f'{{"answer": {shown}, "supporting_ids": ["P..", ...]}}'
        return (f"Passages:\n{render_items(self.items(inputs), 'passage')}\n"
                f"Question:\n{block('data', inputs['question'])}\n{opt_txt}"
                f"Draft answer:\n{block('data', inputs['answer'])}\n"
                f"{lists}Reply with {reply}.")


__all__ = ["REWRITE_MODES", "RewriteMode", "StrictRewrite"]
