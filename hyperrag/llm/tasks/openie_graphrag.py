"""OpenIE, GraphRAG style (used by HugRAG, its Fig 8): typed entities with comprehensive descriptions, and the
relations between them with a description and a strength score from 1 to 10.

Every instruction of HugRAG's Fig 8 (adapted there from Microsoft GraphRAG's element extraction, Edge et al., 2024),
in our own words and JSON instead of tuple delimiters:

1. identify *all* entities of the given types in the text; per entity its name in capital letters, one type from
   the list and a comprehensive description of its attributes and activities as the text gives them;
2. from those entities, every pair that is clearly related: source and target named as in step 1, a description
   explaining why they are related, and a numeric strength;
3. the whole reply in English, one object listing all entities and relations (the JSON stands for GraphRAG's
   record and completion delimiters);
4. three worked examples (ours: a central bank, a river and a scientist), as Fig 8 shows three.

The schema caps neither list (Fig 8 asks for all entities and relations); the reply's length is bounded only by
``max_tokens`` (3,072, room for ~60 described entities and relations).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import block, json_example
from hyperrag.llm.tasks.base import Name, Task, Text, passage_of

SCHEMA_VERSION = "2"

DEFAULT_TYPES = ("person", "organization", "location", "event", "date", "work", "concept", "other")


class Entity(BaseModel):
    name: Name
    type: Name
    description: Text = ""


class Relation(BaseModel):
    source: Name
    target: Name
    description: Text = ""
    strength: int = Field(5, description="1 (weak, incidental) to 10 (strong, defining)")

    @field_validator("strength", mode="before")
    @classmethod
    def _clamp(cls, v: Any) -> int:
        try:
            return max(1, min(10, round(float(v))))
        except (TypeError, ValueError):
            return 5


class GraphElements(BaseModel):
    entities: list[Entity]
    relations: list[Relation]


# Three worked examples of our own (Fig 8 shows three): (entity types, text, the reply).
EXAMPLES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("organization, person",
     ("The Bank of Norland raised its policy rate to 4.5% on Thursday. Governor Ilse Varga said the board acted to "
     "bring inflation back to its 2% target, and the Norland Treasury welcomed the decision."),
     {"entities": [
         {"name": "BANK OF NORLAND", "type": "organization",
          "description": "The central bank of Norland; on Thursday it raised its policy rate to 4.5% to bring "
                         "inflation back to its 2% target."},
         {"name": "ILSE VARGA", "type": "person",
          "description": "Governor of the Bank of Norland, who explained that the board raised the rate to bring "
                         "inflation back to target."},
         {"name": "NORLAND TREASURY", "type": "organization",
          "description": "Norland's finance ministry, which welcomed the bank's rate decision."}],
      "relations": [
         {"source": "ILSE VARGA", "target": "BANK OF NORLAND",
          "description": "Ilse Varga governs the Bank of Norland and announced its decision.", "strength": 9},
         {"source": "NORLAND TREASURY", "target": "BANK OF NORLAND",
          "description": "The Treasury publicly welcomed the bank's rate increase.", "strength": 5}]}),
    ("location, event, date",
     ("The Selva River flooded the town of Marrow in April 1921 after a week of rain; the flood destroyed the old "
     "mill and led to the building of the Marrow Dam upstream."),
     {"entities": [
         {"name": "SELVA RIVER", "type": "location",
          "description": "River that runs past Marrow and flooded the town in April 1921 after a week of rain."},
         {"name": "MARROW", "type": "location",
          "description": "Town on the Selva River, flooded in April 1921; its old mill was destroyed."},
         {"name": "1921 MARROW FLOOD", "type": "event",
          "description": "Flood of the Selva at Marrow in April 1921 caused by a week of rain; it destroyed the "
                         "old mill and prompted the Marrow Dam."},
         {"name": "APRIL 1921", "type": "date", "description": "Month in which the Selva flooded Marrow."},
         {"name": "MARROW DAM", "type": "location",
          "description": "Dam built upstream of Marrow on the Selva in response to the 1921 flood."}],
      "relations": [
         {"source": "SELVA RIVER", "target": "1921 MARROW FLOOD",
          "description": "The flood was the Selva River overflowing.", "strength": 9},
         {"source": "1921 MARROW FLOOD", "target": "MARROW",
          "description": "The flood struck Marrow and destroyed its old mill.", "strength": 9},
         {"source": "1921 MARROW FLOOD", "target": "APRIL 1921",
          "description": "The flood happened in April 1921.", "strength": 7},
         {"source": "1921 MARROW FLOOD", "target": "MARROW DAM",
          "description": "The flood led to the dam being built.", "strength": 8}]}),
    ("person, organization, work",
     ("Chemist Tomas Lind joined the Halden Institute in 1998, where he wrote 'Salts of the Deep Sea', a study of "
     "brine pools that won him the Ostrom Medal."),
     {"entities": [
         {"name": "TOMAS LIND", "type": "person",
          "description": "Chemist who joined the Halden Institute in 1998, wrote 'Salts of the Deep Sea' there "
                         "and won the Ostrom Medal for it."},
         {"name": "HALDEN INSTITUTE", "type": "organization",
          "description": "Research institute Tomas Lind joined in 1998, where he wrote his study of brine pools."},
         {"name": "SALTS OF THE DEEP SEA", "type": "work",
          "description": "Study of deep-sea brine pools by Tomas Lind, written at the Halden Institute; it won "
                         "the Ostrom Medal."}],
      "relations": [
         {"source": "TOMAS LIND", "target": "HALDEN INSTITUTE",
          "description": "Lind has worked at the institute since 1998.", "strength": 8},
         {"source": "TOMAS LIND", "target": "SALTS OF THE DEEP SEA",
          "description": "Lind wrote the study.", "strength": 10},
         {"source": "SALTS OF THE DEEP SEA", "target": "HALDEN INSTITUTE",
          "description": "The study was written at the institute.", "strength": 6}]}),
)
#: the examples as every extraction prompt shows them
SHOTS = "\n\n".join(f"Example {i}:\nEntity types: {t}\nText: {text}\nReply: {json_example(reply)}"
                     for i, (t, text, reply) in enumerate(EXAMPLES, 1))


class GraphExtraction(Task):
    """Inputs: ``passage``; optional ``entity_types`` (defaults to :data:`DEFAULT_TYPES`)."""

    name = "openie_graphrag"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = GraphElements
    max_tokens = 3072
    # Fig 8, step by step, in our own words
    ROLE = (
        "You build a knowledge graph from a text that may bear on the user's work. You are given the text and a "
        "list of entity types. Step 1: identify every entity in the text whose type is in the list. For each, give "
        "its name in capital letters, its type (one of the listed types) and a comprehensive description of the "
        "entity's attributes and activities as the text presents them. Step 2: among the entities found in step "
        "1, find every pair that is clearly related. For each pair give the source and target (named exactly as "
        "in step 1), a description explaining why you judge them related, and a strength: an integer from 1 "
        "(weak, incidental) to 10 (strong, defining). Step 3: write the whole reply in English, as one object "
        "listing all the entities and all the relations from steps 1 and 2."
    )

    def __init__(self, entity_types: Sequence[str] = DEFAULT_TYPES) -> None:
        self.entity_types = tuple(t.lower() for t in entity_types)

    @property
    def variant(self) -> str:
        return "" if self.entity_types == DEFAULT_TYPES else "types=" + ",".join(self.entity_types)

    def user(self, inputs: Mapping[str, Any]) -> str:
        types = inputs.get("entity_types") or self.entity_types
        return (
            f"Examples:\n{SHOTS}\n\n"
            f"Real data:\nEntity types: {', '.join(types)}\n"
            f"Text:\n{block('passage', passage_of(inputs))}\n"
            'Reply with {"entities": [...], "relations": [...]} for this text.'
        )

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        types = set(inputs.get("entity_types") or self.entity_types)
        entities: dict[str, Entity] = {}
        for e in output.entities:  # type: ignore[attr-defined]
            key = e.name.casefold()
            if key not in entities:
                kind = e.type.lower()
                entities[key] = Entity(name=e.name, type=kind if kind in types else "other",
                                       description=e.description)
        relations, dropped, seen = [], 0, set()
        for r in output.relations:  # type: ignore[attr-defined]
            s, t = r.source.casefold(), r.target.casefold()
            if s not in entities or t not in entities or s == t:
                dropped += 1  # endpoints must be entities the reply itself listed
                continue
            if (s, t) in seen:
                continue
            seen.add((s, t))
            relations.append(Relation(source=entities[s].name, target=entities[t].name,
                                      description=r.description, strength=r.strength))
        return GraphElements(entities=list(entities.values()), relations=relations), dropped
