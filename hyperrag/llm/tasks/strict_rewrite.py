"""Rewrite under strict grounding (CDF-RAG): revise an answer so that it says only what the evidence
supports.

After claim checking, the answer is rewritten against the passages: unsupported or refuted content
is removed or corrected, nothing new is added from outside knowledge, and the supporting passages
are cited by ID (checked against those shown).

Multiple choice: with ``options`` in the inputs the revised answer must be one of them (shown lettered, answered
with a letter, like ``grounded_answer``); ``value["answer"]`` is the option's text, ``value["option"]`` its
position. Without options the messages are those of the free-form task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.prompting import block, key_map, make_items, render_items, require, system_prompt
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids
from hyperrag.llm.tasks.grounded_answer import options_of
from hyperrag.utils.answers import OPTION_LETTERS, option_letter, parse_option

SCHEMA_VERSION = "1"


class Rewrite(BaseModel):
    answer: Text
    supporting_ids: IdList = []


class StrictRewrite(Task):
    """Inputs: ``question``, ``answer`` (draft), ``passages``; optional ``unsupported_claims`` and ``options``.

    ``value``: ``{"answer": str, "supporting": [caller keys]}``, plus ``"option": int`` with options.
    """

    name = "strict_rewrite"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Rewrite
    max_tokens = 384
    ROLE = (
        "You revise a draft answer under strict grounding. Keep only statements the passages support; correct "
        "or remove anything they contradict or do not cover, especially the listed unsupported claims. Add "
        "nothing from outside knowledge. Keep the answer as short as the question allows and cite the IDs "
        "of the passages that support it. If nothing is supported, answer \"unknown\"."
    )
    OPTIONS_ROLE = (
        "When answer options are listed, the revised answer must be exactly one of them, given by its letter: "
        "pick the option the passages support best."
    )

    def system(self, inputs: Mapping[str, Any]) -> str:
        return system_prompt(f"{self.ROLE} {self.OPTIONS_ROLE}" if options_of(inputs) else self.ROLE)

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "answer", "passages", task=self.name)
        bad = list(inputs.get("unsupported_claims") or [])
        bad_txt = "Unsupported claims:\n" + "\n".join(block("data", c) for c in bad) + "\n" if bad else ""
        options = options_of(inputs)
        opt_txt, reply = "", '"..."'
        if options:
            lettered = "\n".join(f"{option_letter(i)}. {o}" for i, o in enumerate(options))
            opt_txt = f"Options:\n{block('data', lettered)}\n"
            reply = f'"<one letter, A to {option_letter(len(options) - 1)}>"'
        return (f"Passages:\n{render_items(self.items(inputs), 'passage')}\n"
                f"Question:\n{block('data', inputs['question'])}\n{opt_txt}"
                f"Draft answer:\n{block('data', inputs['answer'])}\n"
                f'{bad_txt}Reply with {{"answer": {reply}, "supporting_ids": ["P..", ...]}}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.supporting_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        answer = output.answer  # type: ignore[attr-defined]
        options = options_of(inputs)
        if options:  # the answer must name an option; stored as its letter
            choice = parse_option(answer, options)
            if choice is None:
                letters = ", ".join(option_letter(i) for i in range(len(options)))
                raise OutputInvalid(f"answer {answer[:80]!r} names none of the options; reply with one of {letters}")
            answer = option_letter(choice)
        return Rewrite(answer=answer, supporting_ids=kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        supporting = [keys[i] for i in output.supporting_ids]  # type: ignore[attr-defined]
        options = options_of(inputs)
        if not options:
            return {"answer": output.answer, "supporting": supporting}  # type: ignore[attr-defined]
        choice = OPTION_LETTERS.index(output.answer)  # type: ignore[attr-defined]  # check() stored a letter
        return {"answer": options[choice], "option": choice, "supporting": supporting}
