"""Final answer from a filtered evidence subgraph only (HugRAG, its Fig 7; Algorithm 1 line 15).

Prompt forms (``AnswerFromSubgraph(style, prompts=...)``, HugRAG's ``prompts`` setting):

* ``paper`` (default): Fig 7's message exactly as printed — one user message, the evidence context as plain lines
  (one per evidence item), the draft and the question as plain text (an absent draft leaves its section empty, as
  the template does), no system message, no data blocks, no constrained decoding — and the reply read as Fig 7
  asks for it: free text, the whole reply is the answer. Fig 7 asks for no bare answer, so with the explanatory
  style ``short_answer`` is the whole answer too (EM / F1 on entity QA read it: labelled in
  ``docs/fidelity/hugrag.md``).
* ``paper_json``: Fig 7's text with the evidence context as ``<item>`` blocks, the draft and the question as
  ``<data>`` blocks, and our system message: the structured-output rule, the reply's keys (``answer``; with the
  explanatory style also ``short_answer``, the bare answer EM/F1 score) and the data rule. No abstention rule, no
  length rule.
* ``extended``: our restatement below, with our additions.

``extended`` — Fig 7's instructions, in our own words: the model is a helpful assistant answering the user's question; it answers
from the evidence context given (the causal subgraph S* the path identification kept: its items, and the passages
they were extracted from, which the caller supplies) and from nothing else (A.2: "rely only on the provided
evidence"); a draft answer may come with it (from the path identification) and is used only where the evidence
supports it; the answer is concise, direct and neutral. One addition, documented in ``docs/fidelity/hugrag.md``:
when the evidence does not hold the answer the model says so rather than guessing (an abstention, scored 0).

Answer style (``AnswerFromSubgraph(style=...)``, the run's ``answer_style``): ``short`` — the bare entity, date,
number or short statement asked for (multi-hop QA benchmarks score those); ``explanatory`` — the answer in as many
sentences as the question needs (the paper's answers: HolisQA's are 2–4 sentences, and F1, context recall and
answer relevancy score the whole answer), plus ``short_answer``, the bare answer EM and F1 score on entity QA.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.prompting import (
    DATA_RULE,
    JSON_RULE,
    Item,
    block,
    make_items,
    plain,
    render_items,
    require,
    system_prompt,
)
from hyperrag.llm.tasks.answer_style import AnswerStyle, LongText, StyledAnswer
from hyperrag.llm.tasks.base import PROMPT_FORMS, Parsed, PromptForm, Task, Text

SCHEMA_VERSION = "2"
UNKNOWN = "unknown"

#: Fig 7 of the HugRAG paper, verbatim
FIG7 = """---Role---
You are a helpful assistant answering the user's question.

---Goal---
Answer the question using the provided evidence context. A draft answer may be provided; use it only if it is supported by the evidence.

---Evidence Context---
{report_context}

---Draft Answer (optional)---
{draft_answer}

---Question---
{query}

---Answer Format---
Concise, direct, and neutral."""
#: ours: the reply's keys under structured output (paper form)
PAPER_KEYS = {"short": 'Give the answer as {"answer": "..."}.',
              "explanatory": 'Give the answer as {"answer": "...", "short_answer": "..."}: short_answer is the bare '
                             "entity, date, number or phrase the answer gives."}


class SubgraphAnswer(BaseModel):
    answer: Text


class ExplainedSubgraphAnswer(BaseModel):
    answer: LongText
    short_answer: Text


class AnswerFromSubgraph(StyledAnswer, Task):
    """Inputs: ``question``, ``evidence`` (strings, (key, text) pairs or mappings with ``text``, optionally
    ``passage_ids``), optional ``draft_answer``. ``value``: ``{"answer": str}`` (+ ``"short_answer"`` when
    explanatory).

    Args:
        style: ``short`` or ``explanatory`` (see the module docstring).
        prompts: ``paper`` (Fig 7 as printed, a free-text answer), ``paper_json`` (Fig 7 in our JSON frame) or
            ``extended`` (ours); see the module docstring.
    """

    name = "subgraph_answer"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = SubgraphAnswer
    # Fig 7, in our words: the role, the goal (evidence only; the draft only where supported), the format
    COMMON = ("You are a helpful assistant who answers the user's question. Base the answer on the evidence "
              "context given and on nothing else: the evidence is the part of a knowledge graph judged to explain "
              "the answer, its items and the passages they come from. A draft answer may be given with it; use "
              "the draft only where the evidence supports it. Keep the answer concise, direct and neutral.")
    SHORT = ("Give the entity, date, number or short statement the question asks for. If the evidence does not "
             f'contain the answer, reply "{UNKNOWN}" rather than guessing.')
    EXPLANATORY = ("Write the answer in as many sentences as the question needs (often two to four): state it, then "
                   "the facts from the evidence that lead to it. Also give short_answer: the bare entity, date, "
                   "number or phrase asked for, not a sentence. If the evidence does not contain the answer, say "
                   f'so in the answer and give "{UNKNOWN}" as short_answer rather than guessing.')
    ROLE = f"{COMMON} {SHORT}"

    def __init__(self, style: AnswerStyle = "short", prompts: PromptForm = "paper") -> None:
        super().__init__(style)
        if prompts not in PROMPT_FORMS:
            raise ValueError(f"subgraph_answer prompts {prompts!r}; expected one of {PROMPT_FORMS}")
        self.prompts = prompts

    @property
    def variant(self) -> str:
        style = super().variant
        form = {"paper": "paper_text", "paper_json": "paper"}.get(self.prompts)
        if form is None:
            return style
        return f"{style}/{form}" if style else form

    def output_model(self) -> type[BaseModel]:
        return ExplainedSubgraphAnswer if self.explanatory else SubgraphAnswer

    def system(self, inputs: Mapping[str, Any]) -> str:
        if self.prompts == "paper_json":
            return f"{JSON_RULE} {PAPER_KEYS[self.style]}\n{DATA_RULE}"
        return system_prompt(f"{self.COMMON} {self.EXPLANATORY if self.explanatory else self.SHORT}")

    def items(self, inputs: Mapping[str, Any]) -> list[Item]:
        return make_items(list(inputs["evidence"]), "X")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "evidence", task=self.name)
        draft = str(inputs.get("draft_answer") or "").strip()
        if self.prompts == "paper":
            return FIG7.format(report_context="\n".join(plain(it.text) for it in self.items(inputs)),
                               draft_answer=plain(draft), query=plain(inputs["question"]))
        if self.prompts == "paper_json":
            return FIG7.format(report_context=render_items(self.items(inputs), "item"),
                               draft_answer=block("data", draft) if draft else "", query=block("data", inputs["question"]))
        draft_part = f"Draft answer (optional):\n{block('data', draft)}\n" if draft else ""
        reply = ('Reply with {"answer": "<the answer, explained>", "short_answer": "..."}.' if self.explanatory
                 else 'Reply with {"answer": "..."}.')
        return (f"Evidence:\n{render_items(self.items(inputs), 'item')}\n{draft_part}"
                f"Question:\n{block('data', inputs['question'])}\n{reply}")

    def reply_text(self, reply: Mapping[str, Any]) -> str:
        return str(reply["answer"]) if self.prompts == "paper" else super().reply_text(reply)

    def parse(self, raw: str, inputs: Mapping[str, Any]) -> Parsed:
        """``paper``: the whole free-text reply is the answer (an empty one is invalid); else the JSON object."""
        if self.prompts != "paper":
            return super().parse(raw, inputs)
        text = raw.strip()
        if not text:
            raise OutputInvalid("empty reply")
        text = text[:1000]  # the schema's bound on an answer
        output: BaseModel = (ExplainedSubgraphAnswer(answer=text, short_answer=text) if self.explanatory
                             else SubgraphAnswer(answer=text))
        return Parsed(output, self.interpret(output, inputs), 0, False)

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        value = {"answer": output.answer}  # type: ignore[attr-defined]
        if isinstance(output, ExplainedSubgraphAnswer):
            value["short_answer"] = output.short_answer
        return value
