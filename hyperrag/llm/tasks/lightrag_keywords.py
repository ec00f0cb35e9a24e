"""LightRAG's query keywords: two lists, high-level (themes) and low-level (entities and details).

LightRAG retrieves at two levels: low-level keywords are matched to the knowledge graph's entities (local
mode), high-level keywords to its relationships (global mode), both in hybrid and mix modes. Following its
keyword-extraction prompt — a role, the two kinds of keywords defined, a JSON reply with both lists, worked
examples, then the query — in our own words and with our own examples. No gold exists for keywords: the oracle
fails this task (``no_gold``) and the retriever uses its YAKE stand-in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, json_example, require
from hyperrag.llm.tasks.base import Name, Task

SCHEMA_VERSION = "1"

EXAMPLES = [
    ("Which bridge crosses the river that flows past the castle where the poet Ilse Varga was held?",
     {"high_level_keywords": ["bridges over rivers", "imprisonment of writers", "river geography"],
      "low_level_keywords": ["Ilse Varga", "castle", "poet", "bridge"]}),
    ("How did the 1973 oil embargo change car sales in Norway?",
     {"high_level_keywords": ["energy crisis effects", "automobile market", "fuel prices"],
      "low_level_keywords": ["1973 oil embargo", "Norway", "car sales"]}),
]


class DualKeywords(BaseModel):
    high_level_keywords: list[Name] = Field(default_factory=list, max_length=12)
    low_level_keywords: list[Name] = Field(default_factory=list, max_length=12)


class LightRAGKeywords(Task):
    """Inputs: ``question``. ``value``: ``{"high_level": [str], "low_level": [str]}`` (duplicates removed)."""

    name = "lightrag_keywords"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = DualKeywords
    max_tokens = 200
    ROLE = (
        "You choose search keywords for a retrieval system that looks a question up in a knowledge graph, both "
        "among its entities and among the relationships between them. Write two lists. High-level keywords: "
        "the broad concepts, themes or kinds of information the question is about. Low-level keywords: the "
        "specific entities, names, titles, places, dates, numbers and concrete details it mentions. Keep each "
        "keyword short (a word or a short phrase) and take it from the question or from what it clearly "
        "implies. Leave a list empty when the question gives nothing for it."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", task=self.name)
        shots = "\n".join(f"Question: {q}\nReply: {json_example(a)}" for q, a in EXAMPLES)
        return (f"Examples:\n{shots}\n\nQuestion:\n{block('data', inputs['question'])}\n"
                'Reply with {"high_level_keywords": [...], "low_level_keywords": [...]}.')

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, list[str]]:
        return {"high_level": list(dict.fromkeys(output.high_level_keywords)),  # type: ignore[attr-defined]
                "low_level": list(dict.fromkeys(output.low_level_keywords))}  # type: ignore[attr-defined]
