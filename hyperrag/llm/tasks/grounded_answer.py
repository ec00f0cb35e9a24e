"""Grounded answer: answer a question from retrieved passages only, citing them by ID.

The reader step of every method: passages are shown with short IDs (``P1``...), the model writes a
short answer (an entity, date or phrase, as multi-hop QA benchmarks expect) and the IDs of the
passages that support it; cited IDs are checked against those shown.

Multiple choice: with ``options`` in the inputs the options are shown lettered (``A.``, ``B.``...) and the
model answers with one letter; a reply naming no option (by letter or text) is invalid and re-asked, and
``value["answer"]`` is the chosen option's text (``value["option"]`` its position). Without options the
messages are exactly those of the free-form task, so cached answers stay valid.

No passages (a method without retrieval): the model answers from its own knowledge (closed book); only then
do the messages say so, so every other prompt, and its cached answer, is unchanged.

Answer style (``GroundedAnswer(style=...)``, the run's ``answer_style``): ``short`` (the default; the messages
above) or ``explanatory`` — the answer explains itself from the passages in as many sentences as the question
needs, and a separate ``short_answer`` field carries the bare entity / date / phrase that EM and F1 score
(HugRAG, HyperRAG and CDF-RAG generate explanations; multi-hop QA benchmarks score short answers). A
multiple-choice question is answered with an option's letter in either style.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.prompting import block, key_map, make_items, render_items, require, system_prompt
from hyperrag.llm.tasks.answer_style import LongText, StyledAnswer
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids
from hyperrag.utils.answers import OPTION_LETTERS, option_letter, parse_option

SCHEMA_VERSION = "1"


# An explanation of "two to four sentences" fits in 1,000 characters. The bound is also what keeps the embedded
# llama.cpp server alive: its JSON-schema grammar expands maxLength into nested optional repetitions, and SmolLM2's
# server died (connection refused, every later call failed) on the first explanatory answer with maxLength 1,500
# or 3,000, but not with 1,000 (measured 2026-11-28, issue 33).


class Answer(BaseModel):
    answer: Text
    supporting_ids: IdList = []


class ExplainedAnswer(BaseModel):
    answer: LongText
    short_answer: Text
    supporting_ids: IdList = []


def options_of(inputs: Mapping[str, Any]) -> list[str]:
    return [str(o) for o in inputs.get("options") or ()]


class GroundedAnswer(StyledAnswer, Task):
    """Inputs: ``question``, ``passages`` (strings, (key, text) pairs, mappings or Passages), optionally
    ``options`` (answer options of a multiple-choice question).

    ``value``: ``{"answer": str, "supporting": [caller keys]}``, plus ``"option": int`` with options.
    """

    name = "grounded_answer"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Answer
    ROLE = (
        "You answer questions using only the given passages. Reason across passages when the question needs "
        "several steps. Give a short answer: the entity, date, number or phrase asked for, not a sentence. "
        "List the IDs of the passages that support the answer. If the passages do not contain the answer, "
        "give your best short guess and an empty supporting_ids list."
    )
    CLOSED_BOOK_ROLE = (
        "You answer questions from your own knowledge; no passages are given. Give a short answer: the "
        "entity, date, number or phrase asked for, not a sentence, and an empty supporting_ids list. If you do "
        "not know, give your best short guess."
    )
    EXPLANATORY_ROLE = (
        "You answer questions using only the given passages. Write the answer as an explanation grounded in the "
        "passages, as long as the question needs (usually two to four sentences): state the answer, then the facts "
        "from the passages that lead to it, reasoning across passages when the question needs several steps. Do "
        "not add facts the passages do not give. Also give short_answer: the bare entity, date, number or phrase "
        "the question asks for, not a sentence. List the IDs of the passages that support the answer. If the "
        "passages do not contain the answer, say so in the explanation, give your best short guess as "
        "short_answer and an empty supporting_ids list."
    )
    EXPLANATORY_CLOSED_BOOK_ROLE = (
        "You answer questions from your own knowledge; no passages are given. Explain the answer in as many "
        "sentences as the question needs, give short_answer: the bare entity, date, number or phrase asked for, "
        "and an empty supporting_ids list. If you do not know, say so and give your best short guess."
    )
    OPTIONS_ROLE = (
        "When answer options are listed, the answer must be exactly one of them: reply with its letter only, "
        "even if the passages do not settle the question (then pick the most plausible option)."
    )
    EXPLANATORY_OPTIONS_ROLE = (
        "You answer multiple-choice questions using the given passages. Explain in the answer, from the passages, "
        "which option is right and why, in as many sentences as the question needs; short_answer must be exactly "
        "one option's letter, even if the passages do not settle the question (then pick the most plausible "
        "option). List the IDs of the passages that support the choice."
    )

    def output_model(self) -> type[BaseModel]:
        return ExplainedAnswer if self.explanatory else Answer

    def system(self, inputs: Mapping[str, Any]) -> str:
        passages = bool(list(inputs.get("passages") or ()))
        if options_of(inputs) and self.explanatory:  # an explanation, and the option's letter as short_answer
            return system_prompt(self.EXPLANATORY_OPTIONS_ROLE)
        if options_of(inputs):
            return system_prompt(f"{self.ROLE if passages else self.CLOSED_BOOK_ROLE} {self.OPTIONS_ROLE}")
        if self.explanatory:
            return system_prompt(self.EXPLANATORY_ROLE if passages else self.EXPLANATORY_CLOSED_BOOK_ROLE)
        return system_prompt(self.ROLE if passages else self.CLOSED_BOOK_ROLE)

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "passages", task=self.name)
        options = options_of(inputs)
        shown = f"Passages:\n{render_items(self.items(inputs), 'passage')}\n" if list(inputs["passages"]) else ""
        cite = '["P..", ...]' if shown else "[]"
        if not options and self.explanatory:
            return (f"{shown}"
                    f"Question:\n{block('data', inputs['question'])}\n"
                    f'Reply with {{"answer": "<the explanation>", "short_answer": "...", "supporting_ids": {cite}}}.')
        if not options:
            return (f"{shown}"
                    f"Question:\n{block('data', inputs['question'])}\n"
                    f'Reply with {{"answer": "...", "supporting_ids": {cite}}}.')
        lettered = "\n".join(f"{option_letter(i)}. {o}" for i, o in enumerate(options))
        if self.explanatory:
            return (f"{shown}"
                    f"Question:\n{block('data', inputs['question'])}\n"
                    f"Options:\n{block('data', lettered)}\n"
                    f'Reply with {{"answer": "<why, from the passages>", "short_answer": "<one letter, A to '
                    f'{option_letter(len(options) - 1)}>", "supporting_ids": {cite}}}.')
        return (f"{shown}"
                f"Question:\n{block('data', inputs['question'])}\n"
                f"Options:\n{block('data', lettered)}\n"
                f'Reply with {{"answer": "<one letter, A to {option_letter(len(options) - 1)}>", '
                f'"supporting_ids": {cite}}}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.supporting_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        answer = output.answer  # type: ignore[attr-defined]
        options = options_of(inputs)
        if isinstance(output, ExplainedAnswer):
            if options:  # the option is read from the short answer, else from the explanation
                choice = parse_option(output.short_answer, options)
                choice = parse_option(answer, options) if choice is None else choice
                if choice is None:
                    raise OutputInvalid(f"answer {output.short_answer[:80]!r} names none of the options")
                return ExplainedAnswer(answer=answer, short_answer=option_letter(choice), supporting_ids=kept), dropped
            return ExplainedAnswer(answer=answer, short_answer=output.short_answer, supporting_ids=kept), dropped
        if options:  # the answer must name an option; stored as its letter
            choice = parse_option(answer, options)
            if choice is None:
                letters = ", ".join(option_letter(i) for i in range(len(options)))
                raise OutputInvalid(f"answer {answer[:80]!r} names none of the options; reply with one of {letters}")
            answer = option_letter(choice)
        return Answer(answer=answer, supporting_ids=kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        supporting = [keys[i] for i in output.supporting_ids]  # type: ignore[attr-defined]
        options = options_of(inputs)
        if not options:
            value = {"answer": output.answer, "supporting": supporting}  # type: ignore[attr-defined]
            if isinstance(output, ExplainedAnswer):
                value["short_answer"] = output.short_answer
            return value
        if isinstance(output, ExplainedAnswer):  # check() stored the option's letter as the short answer
            choice = OPTION_LETTERS.index(output.short_answer)
            return {"answer": options[choice], "option": choice, "supporting": supporting,
                    "explanation": output.answer}
        choice = OPTION_LETTERS.index(output.answer)  # type: ignore[attr-defined]  # check() stored a letter
        return {"answer": options[choice], "option": choice, "supporting": supporting}
