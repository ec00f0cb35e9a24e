"""Entity summary (CatRAG, Table 9): a short narrative of one entity from the fact triples it appears in.

CatRAG's adaptive entity contextualisation shows an information-dense neighbour (more than τ facts) to the
edge scorer through a summary of its facts instead of the facts themselves. The summary has the entity as its
subject, opens with what the entity is, covers every key relation of the triples grouped by theme, points out
its notable connections, reads as prose rather than a list, stays within 150 tokens and uses only the triples.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, json_example, require
from hyperrag.llm.tasks.base import Task, Text

SCHEMA_VERSION = "2"
MAX_SUMMARY_TOKENS = 150
MAX_SUMMARY_CHARS = 1000  # the schema's bound on ``Text``

# One worked example (our own).
_EXAMPLE_ENTITY = "Lena Varga"
_EXAMPLE_FACTS = [
    ["Lena Varga", "born in", "Szeged"],
    ["Lena Varga", "occupation", "architect"],
    ["Lena Varga", "designed", "Tisza Footbridge"],
    ["Lena Varga", "designed", "Szeged Public Library"],
    ["Lena Varga", "studied at", "Budapest University of Technology"],
    ["Lena Varga", "received", "Ybl Prize"],
    ["Tisza Footbridge", "opened in", "2011"],
]
_EXAMPLE_SUMMARY = (
    "Lena Varga is an architect from Szeged who studied at the Budapest University of Technology. Her work "
    "includes two public buildings in her home region, the Tisza Footbridge (opened in 2011) and the Szeged "
    "Public Library, and she was honoured with the Ybl Prize."
)


class Summary(BaseModel):
    summary: Text


def fact_list(facts: Any) -> list[Any]:
    """Triples as JSON-ready lists; strings stay strings."""
    return [list(f) if isinstance(f, (list, tuple)) else str(f) for f in facts]


class EntitySummary(Task):
    """Inputs: ``entity`` (the target entity's name) and ``facts`` (the triples it appears in, or strings).

    ``value``: the summary text.
    """

    name = "entity_summary"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Summary
    max_tokens = 256
    ROLE = (
        "You write a short summary of one knowledge-graph entity, centred on that entity, from the fact "
        "triples in which it appears. The summary says what the entity is and what it is connected to."
    )
    RULES = (
        "Input: the target entity, and a JSON list of [subject, relation, object] triples that mention it.\n"
        "Requirements:\n"
        "- The target entity is the subject of the summary.\n"
        "- Cover every key relation found in the triples; state only what the triples say.\n"
        "- Explain what kind of thing the entity is and what it links to through its relations.\n"
        f"- Keep it coherent and accurate, at most {MAX_SUMMARY_TOKENS} tokens, in English; keep proper names "
        "in their original spelling.\n"
        "Writing guide:\n"
        "- Open with the entity's identity or type.\n"
        "- Put related relations together (all works together, all places together, and so on).\n"
        "- Name its most notable connections to other entities.\n"
        "- Write connected sentences, not a list of facts.\n"
        "Shape: <Entity> is a <type> known for <attributes>. It <main relations> with <connected entities>..."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "entity", "facts", task=self.name)
        return (f"{self.RULES}\n\nExample:\nTarget entity: {block('data', _EXAMPLE_ENTITY)}\n"
                f"Fact triples: {block('data', json_example(_EXAMPLE_FACTS))}\n"
                f"Reply: {json_example({'summary': _EXAMPLE_SUMMARY})}\n\n"
                f"Target entity: {block('data', inputs['entity'])}\n"
                f"Fact triples: {block('data', json_example(fact_list(inputs['facts'])))}\n"
                'Reply with {"summary": "..."}.')

    def prevalidate(self, value: dict[str, Any], inputs: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        if isinstance(value.get("summary"), str):  # an over-long summary is clipped, not rejected
            value = {**value, "summary": value["summary"].strip()[:MAX_SUMMARY_CHARS]}
        return value, 0

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> str:
        return output.summary  # type: ignore[attr-defined]
