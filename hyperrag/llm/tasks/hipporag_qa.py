"""HippoRAG 2's QA reader, in its prompt's structure: passages laid out as ``Wikipedia Title: <title>`` then the
text, the question, a one-shot demonstration turn, and a reply that reasons first ("Thought") and ends with a
concise answer.

The released prompt (``hipporag/prompts/templates/rag_qa_musique.py``: a system role, one user / assistant example
turn, then the question's turn) is restated here in our own words with an example of our own; CatRAG keeps HippoRAG
2's QA prompts (its §4.4), so both methods read with it. The reply is structured (``thought``, ``answer``) instead of
the free text the reference splits at ``Answer:``; no passage IDs are shown, so none are cited.

Answer style: ``short`` → ``value["answer"]`` is the concise answer; ``explanatory`` → the reasoning is the answer
and the concise one its ``short_answer`` (what EM / F1 score). A multiple-choice question is left to
:class:`~hyperrag.llm.tasks.grounded_answer.GroundedAnswer` (the reference prompt has no options).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import make_items, sanitize, system_prompt
from hyperrag.llm.tasks.answer_style import LongText, StyledAnswer
from hyperrag.llm.tasks.base import Task, Text, passage_string

SCHEMA_VERSION = "1"

EXAMPLE_PASSAGES = [
    "Lake Bled\nLake Bled is a lake in the Julian Alps of northwestern Slovenia, where it adjoins the town of Bled.",
    ("Bled Castle\nBled Castle is a medieval castle built on a precipice above the city of Bled in Slovenia, "
    "overlooking Lake Bled."),
    ("Julian Alps\nThe Julian Alps are a mountain range of the Southern Limestone Alps that stretch from northeastern "
    "Italy into Slovenia. Their highest peak is Triglav, at 2,864 metres."),
    "Soča\nThe Soča is a river that flows through western Slovenia and northeastern Italy.",
]
EXAMPLE_QUESTION = "What is the highest peak of the mountain range in which Lake Bled lies?"
EXAMPLE_REPLY = {"thought": "Lake Bled lies in the Julian Alps. The highest peak of the Julian Alps is Triglav. So the "
                            "answer is Triglav.", "answer": "Triglav"}


class ThoughtAnswer(BaseModel):
    thought: LongText
    answer: Text


def wikipedia_layout(passages: list[Any]) -> str:
    """Each passage as ``Wikipedia Title: <title>`` followed by its text, one blank line apart."""
    out = []
    for p in passages:
        text = passage_string(p[1] if isinstance(p, tuple) else p)
        title, _, body = text.partition("\n")
        title, body = sanitize(title).strip(), sanitize(body).strip()  # no chat-template or role markers
        out.append(f"Wikipedia Title: {title}\n{body}" if body else f"Wikipedia Title: \n{title}")
    return "\n\n".join(out)


class HippoRAGQA(StyledAnswer, Task):
    """Inputs: ``question``, ``passages`` (strings ``title\\ntext``, (key, text) pairs or passages).

    ``value``: ``{"answer": str, "supporting": []}``, plus ``"short_answer"`` in the explanatory style.
    """

    name = "hipporag_qa"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = ThoughtAnswer
    ROLE = (
        "You are a careful reading-comprehension assistant. Study the passages and the question closely. Begin your "
        "reply with your reasoning in thought, working step by step from the passages to the conclusion, so that "
        "each step shows how you got there; then give in answer a concise, definitive answer and nothing more."
    )

    SHORT_MAX_TOKENS = 768  # the reasoning comes first in either style

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        """The passages as items (for callers that read what was shown; the prompt shows no IDs)."""
        return make_items(list(inputs["passages"]), "P")

    def _turn(self, passages: list[Any], question: str) -> str:
        return f"{wikipedia_layout(passages)}\n\nQuestion: {sanitize(question).strip()}\nThought:"

    def user(self, inputs: Mapping[str, Any]) -> str:
        if "question" not in inputs or "passages" not in inputs:
            raise ValueError(f"task {self.name}: needs question and passages; got {sorted(inputs)}")
        return self._turn(list(inputs["passages"]), str(inputs["question"]))

    def messages(self, inputs: Mapping[str, Any]) -> list[dict[str, str]]:
        return [{"role": "system", "content": system_prompt(self.ROLE)},
                {"role": "user", "content": self._turn(EXAMPLE_PASSAGES, EXAMPLE_QUESTION)},
                {"role": "assistant", "content": json.dumps(EXAMPLE_REPLY, ensure_ascii=False)},
                {"role": "user", "content": self.user(inputs)}]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        thought, answer = output.thought, output.answer  # type: ignore[attr-defined]
        if self.style == "explanatory":
            return {"answer": thought, "short_answer": answer, "supporting": []}
        return {"answer": answer, "supporting": []}
