"""OpenIE, HippoRAG style: named entities first, then triples that use those entities.

Following HippoRAG (Gutiérrez et al., 2024) and HippoRAG 2: a passage is read twice — once to list
its named entities, once to write subject–relation–object triples grounded in that list, with
pronouns resolved. The two outputs fill ``extracted_entities`` and ``extracted_triples`` of the
OpenIE record format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, json_example, system_prompt
from hyperrag.llm.tasks.base import Name, Task, passage_of

SCHEMA_VERSION = "1"

MAX_ENTITIES = 40
MAX_TRIPLES = 40

Triple = Annotated[list[Name], Field(min_length=3, max_length=3)]


class NamedEntities(BaseModel):
    named_entities: list[Name] = Field(max_length=MAX_ENTITIES)


class Triples(BaseModel):
    triples: list[Triple] = Field(max_length=MAX_TRIPLES)


_EXAMPLE_PASSAGE = (
    "Lake Ohrid\nLake Ohrid straddles the border between North Macedonia and Albania. It was declared a UNESCO "
    "World Heritage Site in 1979, and the town of Struga lies on its northern shore."
)
_EXAMPLE_ENTITIES = ["Lake Ohrid", "North Macedonia", "Albania", "UNESCO World Heritage Site", "1979", "Struga"]
_EXAMPLE_TRIPLES = [
    ["Lake Ohrid", "straddles border between", "North Macedonia"],
    ["Lake Ohrid", "straddles border between", "Albania"],
    ["Lake Ohrid", "declared", "UNESCO World Heritage Site"],
    ["Lake Ohrid", "declared World Heritage Site in", "1979"],
    ["Struga", "lies on northern shore of", "Lake Ohrid"],
]


def _dedupe(values: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for v in values:
        k = v.casefold()
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


_EXAMPLE_QUERY = "Which university did Marie Curie's doctoral advisor attend?"
# as CatRAG's Fig. 1 anchors this question: the named person and the kind of thing asked about
_EXAMPLE_QUERY_ENTITIES = ["Marie Curie", "university"]


class NamedEntityExtraction(Task):
    """Inputs: ``passage`` (``"title\\ntext"``, a mapping with title/text, or a Passage); with
    ``source="query"``, ``query`` (a question: HippoRAG's query NER, CatRAG's symbolic anchoring).

    ``value``: the named entities, as written in the text, each once.

    Args:
        source: ``passage`` (indexing) or ``query`` (the entities a question names).
    """

    name = "openie_hipporag_ner"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = NamedEntities
    max_tokens = 384
    ROLE = (
        "You read one passage and list the named entities it mentions: people, organisations, places, "
        "works, events, dates, numbers with units and other specific named things. Copy each entity as "
        "written in the passage, list each once, and include the passage's own subject (its title)."
    )
    QUERY_ROLE = (
        "You read one question and list every entity it mentions that matters for answering it: people, "
        "organisations, places, works, events, dates, numbers with units and other specific named things, and "
        "also the kind of thing the question asks about or passes through when it names one (such as "
        "'university', 'river' or 'album'). Copy each entity as written in the question and list each once; "
        "leave out only words that name nothing (question words, verbs, 'the')."
    )

    def __init__(self, source: str = "passage") -> None:
        if source not in ("passage", "query"):
            raise ValueError(f"source must be 'passage' or 'query', got {source!r}")
        self.source = source

    @property
    def variant(self) -> str:
        return "query" if self.source == "query" else ""

    def system(self, inputs: Mapping[str, Any]) -> str:
        return system_prompt(self.QUERY_ROLE if self.source == "query" else self.ROLE)

    def user(self, inputs: Mapping[str, Any]) -> str:
        if self.source == "query":
            return (
                f"Example question:\n{block('data', _EXAMPLE_QUERY)}\n"
                f"Example reply: {json_example({'named_entities': _EXAMPLE_QUERY_ENTITIES})}\n\n"
                f"Question:\n{block('data', inputs['query'])}\n"
                'Reply with {"named_entities": [...]} for this question.'
            )
        return (
            f"Example passage:\n{block('passage', _EXAMPLE_PASSAGE)}\n"
            f"Example reply: {json_example({'named_entities': _EXAMPLE_ENTITIES})}\n\n"
            f"Passage:\n{block('passage', passage_of(inputs))}\n"
            'Reply with {"named_entities": [...]} for this passage.'
        )

    def prevalidate(self, value: dict[str, Any], inputs: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        raw = value.get("named_entities")
        if not isinstance(raw, list):
            return value, 0
        good = [str(e).strip()[:200] for e in raw if isinstance(e, (str, int, float)) and str(e).strip()]
        return {**value, "named_entities": _dedupe(good)[:MAX_ENTITIES]}, len(raw) - len(good)

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[str]:
        return list(output.named_entities)  # type: ignore[attr-defined]


class TripleExtraction(Task):
    """Inputs: ``passage`` and ``named_entities`` (the NER output for that passage)."""

    name = "openie_hipporag_triples"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Triples
    max_tokens = 768
    ROLE = (
        "You turn one passage into a small knowledge graph of [subject, relation, object] triples. "
        "Every triple states one fact the passage asserts. Each triple should use at least one, ideally "
        "two, of the given named entities as subject or object. Replace pronouns and vague references "
        "with the specific names they refer to. Keep relations short verb phrases."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        entities = list(inputs.get("named_entities") or [])
        return (
            f"Example passage:\n{block('passage', _EXAMPLE_PASSAGE)}\n"
            f"Example named entities: {json_example(_EXAMPLE_ENTITIES)}\n"
            f"Example reply: {json_example({'triples': _EXAMPLE_TRIPLES})}\n\n"
            f"Passage:\n{block('passage', passage_of(inputs))}\n"
            f"Named entities:\n{block('data', json_example(entities))}\n"
            'Reply with {"triples": [[subject, relation, object], ...]} for this passage.'
        )

    def prevalidate(self, value: dict[str, Any], inputs: Mapping[str, Any]) -> tuple[dict[str, Any], int]:
        raw = value.get("triples")
        if not isinstance(raw, list):
            return value, 0
        good, seen, malformed = [], set(), 0
        for t in raw:
            if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, (str, int, float)) for x in t)
                    and all(str(x).strip() for x in t)):
                malformed += 1
                continue
            key = tuple(str(x).strip().casefold() for x in t)
            if key not in seen:
                seen.add(key)
                good.append([str(x).strip()[:200] for x in t])
        return {**value, "triples": good[:MAX_TRIPLES]}, malformed

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        return [tuple(t) for t in output.triples]  # type: ignore[attr-defined, misc]
