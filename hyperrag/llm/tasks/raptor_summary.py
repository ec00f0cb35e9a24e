"""RAPTOR's cluster summary: the texts of one cluster of tree nodes → one summary node.

RAPTOR builds its tree bottom-up by summarising each cluster of similar chunks (then of summaries) with the
LLM, asking for a summary that keeps as many key details as possible within a length. Same instruction here,
in our own words, with the details named (people, places, dates, numbers, relations) so a short model keeps
them. Summaries have no gold (the oracle fails this task with ``no_gold``; the tree then uses its extractive
stand-in).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import make_items, render_items, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "1"


class ClusterSummary(BaseModel):
    # ~100 tokens asked for; the shared 1,000-character bound keeps llama.cpp's decoding grammar within its limits
    # (a 1,500-character string makes it refuse the grammar and crash the server)
    summary: Text


class RaptorSummary(Task):
    """Inputs: ``texts`` (the cluster's node texts), optional ``max_words``. ``value``: the summary text."""

    name = "raptor_summary"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = ClusterSummary
    max_tokens = 400
    ROLE = (
        "You summarise a group of related text passages into one passage for a search index. Keep as many "
        "of the key details as you can: who and what is involved, names, places, dates, numbers and how the "
        "things mentioned relate to each other. Write plain prose, use only what the passages say."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "texts", task=self.name)
        words = int(inputs.get("max_words", 100))
        return (f"Passages:\n{render_items(make_items(list(inputs['texts']), 'T'), 'passage')}\n"
                f'Reply with {{"summary": "..."}}; at most {words} words.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> str:
        return output.summary  # type: ignore[attr-defined]
