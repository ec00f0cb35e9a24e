"""Final answer from a filtered evidence subgraph only (HugRAG, its Fig 7).

The evidence is the text of the causal subgraph the path identification kept (its items, and the passages they
were extracted from, which the caller supplies); the optional draft answer comes from that identification and is
used only when the evidence supports it. The answer is concise, direct and neutral; when the evidence does not
hold it the model says "unknown" instead of guessing (an abstention, scored 0).

Unlike the shared reader (``grounded_answer``), this task cites nothing and never guesses: it is HugRAG's own
generation step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import Item, block, make_items, render_items, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"
UNKNOWN = "unknown"


class SubgraphAnswer(BaseModel):
    answer: Text


class AnswerFromSubgraph(Task):
    """Inputs: ``question``, ``evidence`` (strings, (key, text) pairs or mappings with ``text``, optionally
    ``passage_ids``), optional ``draft_answer``. ``value``: ``{"answer": str}``."""

    name = "subgraph_answer"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = SubgraphAnswer
    max_tokens = 256
    ROLE = ("You answer a user's question from the evidence given and nothing else. The evidence is the part of a "
            "knowledge graph judged to explain the answer: items and the passages they come from. A draft answer "
            "may be given; keep it only when the evidence supports it. Answer concisely, directly and neutrally: "
            "the entity, date, number or short statement asked for. If the evidence does not contain the answer, "
            f'reply "{UNKNOWN}"; do not guess.')

    def items(self, inputs: Mapping[str, Any]) -> list[Item]:
        return make_items(list(inputs["evidence"]), "X")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "evidence", task=self.name)
        draft = str(inputs.get("draft_answer") or "").strip()
        draft_part = f"Draft answer (optional):\n{block('data', draft)}\n" if draft else ""
        return (f"Evidence:\n{render_items(self.items(inputs), 'item')}\n{draft_part}"
                f"Question:\n{block('data', inputs['question'])}\n"
                'Reply with {"answer": "..."}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        return {"answer": output.answer}  # type: ignore[attr-defined]
