"""Query-aware neighbour scoring (CatRAG, Table 10): rate each neighbour of the current entity 0–10.

CatRAG re-weights the relation arcs leaving a seed entity before Personalized PageRank. The model sees the
query, the current entity, the retrieved (verified) facts as trusted evidence, and every neighbour with the
triple(s) linking it to the current entity and its context ``C(v)`` (a summary of its facts, or the facts
themselves). It scores each neighbour on a four-tier rubric (answer 10, bridge 7–9, weak 4–6, noise 0–3),
scores 0 a neighbour that contradicts the retrieved facts, copies the neighbour's name exactly and gives a
short reason for scores of 4 and up. Neighbours carry short IDs (``N1``...); the reply's IDs are checked, a
score whose name is not the name its ID was shown with is dropped (the model mixed up two neighbours), and
scores are clamped to 0–10.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import Item, block, json_example, key_map, make_items, require
from hyperrag.llm.tasks.base import NAME_MAX, Name, Task, filter_ids

SCHEMA_VERSION = "2"
MAX_REASON_CHARS = 300


class NeighborScore(BaseModel):
    id: str = Field(max_length=40)
    name: Name
    score: int
    reason: str = Field(default="", max_length=MAX_REASON_CHARS)

    @field_validator("score", mode="before")
    @classmethod
    def _clamp(cls, v: Any) -> int:
        return max(0, min(10, round(float(v))))

    @field_validator("reason", mode="before")
    @classmethod
    def _clip(cls, v: Any) -> str:
        return "" if v is None else str(v).strip()[:MAX_REASON_CHARS]


class NeighborScores(BaseModel):
    scores: list[NeighborScore] = Field(max_length=64)


_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def name_key(name: Any) -> str:
    """A name compared case- and punctuation-blind (NFKC, case-folded, non-word runs as one space)."""
    return " ".join(_NON_WORD.sub(" ", unicodedata.normalize("NFKC", str(name)).casefold()).split())


def neighbor_name(value: Any, item: Item) -> str:
    """A neighbour's entity name: the ``name`` of a mapping, else its text up to its context.

    A name a reply cannot copy is shown as one it can: a blank name (HippoRAG 2's text form turns a name written
    only in non-ASCII letters into "", one node on the spaCy 2wiki_dev graph) as ``(unnamed entity <ID>)``, a
    name over :data:`~hyperrag.llm.tasks.base.NAME_MAX` characters cut to that length. Otherwise the reply's
    ``name`` (1 to NAME_MAX characters) fails the schema and the whole call fails: every neighbour of that seed
    unscored (13 of 2,490 calls of CatRAG's oracle run on 2wiki_dev)."""
    if isinstance(value, Mapping) and isinstance(value.get("name"), str):
        name = value["name"]
    else:
        name = item.text
        for cut in (" (via", "\n", ":"):
            name = name.split(cut)[0]
        name = name.strip()
    if not name.strip():
        return f"(unnamed entity {item.id})"
    return name if len(name.strip()) <= NAME_MAX else name.strip()[:NAME_MAX]


def triple_text(fact: Any) -> str:
    """A fact as shown: a triple as a JSON list, anything else as its string."""
    return json_example(list(fact)) if isinstance(fact, (list, tuple)) else str(fact)


# Two worked examples (our own) of the rubric, the contradiction rule and the reply format.
_EXAMPLES = [
    {
        "query": "In which country was the director of the film Blue Harbour born?",
        "entity": "Blue Harbour",
        "facts": [["Blue Harbour", "directed by", "Ines Okafor"]],
        "neighbors": [
            ("Ines Okafor", [["Blue Harbour", "directed by", "Ines Okafor"]],
             "Ines Okafor is a film director born in Lagos, Nigeria; she directed Blue Harbour."),
            ("Drama", [["Blue Harbour", "genre", "Drama"]], "Drama is a film genre shared by thousands of films."),
            ("Tom Reyes", [["Blue Harbour", "directed by", "Tom Reyes"]],
             "Tom Reyes is an actor who appeared in Blue Harbour."),
        ],
        "reply": {"scores": [
            {"id": "N1", "name": "Ines Okafor", "score": 9,
             "reason": "the director the question asks about; her birthplace leads to the country"},
            {"id": "N2", "name": "Drama", "score": 1},
            {"id": "N3", "name": "Tom Reyes", "score": 0},
        ]},
    },
    {
        "query": "Which river runs through the city where the Halden Observatory stands?",
        "entity": "Halden Observatory",
        "facts": [["Halden Observatory", "located in", "Mirovo"]],
        "neighbors": [
            ("Mirovo", [["Halden Observatory", "located in", "Mirovo"]],
             "Mirovo is a city on the Sava river and home of the Halden Observatory."),
            ("Sava", [["Halden Observatory", "overlooks", "Sava"]],
             "The Sava is a river flowing through Mirovo and two other cities."),
            ("astronomy", [["Halden Observatory", "used for", "astronomy"]],
             "[astronomy, studies, celestial objects]"),
        ],
        "reply": {"scores": [
            {"id": "N1", "name": "Mirovo", "score": 8, "reason": "the city of the observatory, the bridge step"},
            {"id": "N2", "name": "Sava", "score": 10, "reason": "the river through Mirovo: the answer itself"},
            {"id": "N3", "name": "astronomy", "score": 2},
        ]},
    },
]


def _render(query: str, entity: str, facts: Sequence[Any], neighbors: Sequence[tuple[str, str, Sequence[Any], str]]
            ) -> str:
    """Query, current entity, retrieved facts and neighbours (``(id, name, linking triples, context)``)."""
    shown_facts = "\n".join(block("fact", triple_text(f)) for f in facts) or block("data", "(none)")
    rows = []
    for nid, name, links, context in neighbors:
        text = f"name: {name}\nlinking triples: " + "; ".join(triple_text(f) for f in links)
        if context:
            text += f"\nsummary: {context}"
        rows.append(block("item", text, id=nid))
    return (f"QUERY:\n{block('data', query)}\nCURRENT ENTITY:\n{block('node', entity)}\n"
            f"RETRIEVED FACTS (trusted):\n{shown_facts}\nNEIGHBORS:\n" + "\n".join(rows))


class NeighborScoring(Task):
    """Inputs: ``query``; ``entity`` (the current entity's name; ``node`` is read as an alias); ``facts``, the
    retrieved verified facts (triples or strings, may be empty); ``neighbors``: mappings ``{"id": caller key,
    "name": entity name, "text": C(v), "links": [linking triples]}`` (strings and ``(key, text)`` pairs are
    shown by their text alone).

    ``value``: ``{caller_key: score}`` (integers 0–10) for every neighbour the reply scored validly.
    """

    name = "neighbor_scoring"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = NeighborScores
    max_tokens = 1024
    ROLE = (
        "You are an expert in reasoning over knowledge graphs. A search is walking a knowledge graph to answer a "
        "user QUERY and stands at the CURRENT ENTITY. Rate every NEIGHBOR of that entity with an integer from 0 "
        "to 10 for how useful stepping to it is for answering the QUERY."
    )
    RULES = (
        "You are given: (1) the QUERY; (2) the CURRENT ENTITY; (3) RETRIEVED FACTS, evidence already verified "
        "for this query, which you must trust; (4) the NEIGHBORS, each with the triple(s) linking it to the "
        "current entity and a short summary of what is known about it.\n"
        "Scoring tiers:\n"
        "- 10 (answer): the neighbour is the answer to the QUERY or directly states it.\n"
        "- 7-9 (bridge): the neighbour is a necessary step of the reasoning chain toward the answer "
        "(for example the person, place or work the next hop is about).\n"
        "- 4-6 (weak): a correct, meaningful link, but off to the side of what the QUERY asks.\n"
        "- 0-3 (noise): unrelated, a generic concept (a genre, a country, a year) with no role in the chain, or "
        "in conflict with the facts.\n"
        "Rules:\n"
        "1. The RETRIEVED FACTS are true. A neighbour that contradicts any of them scores 0.\n"
        "2. Give one entry per neighbour: its ID, its name copied character for character as shown, its score "
        "and, only when the score is 4 or more, a short reason (one clause); leave the reason empty below 4.\n"
        "3. Judge what the neighbour contributes to the chain, not how many words it shares with the QUERY."
    )

    def items(self, inputs: Mapping[str, Any]) -> list[Item]:
        return make_items(list(inputs["neighbors"]), "N")

    def shown(self, inputs: Mapping[str, Any]) -> list[tuple[Item, str]]:
        """Each display item with the name it is shown under."""
        return [(it, neighbor_name(raw, it)) for it, raw in zip(self.items(inputs), inputs["neighbors"])]

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "neighbors", task=self.name)
        entity = inputs.get("entity", inputs.get("node", ""))
        rows = []
        for (it, name), raw in zip(self.shown(inputs), inputs["neighbors"]):
            links = list(raw.get("links") or []) if isinstance(raw, Mapping) else []
            context = it.text if isinstance(raw, Mapping) else ""
            rows.append((it.id, name if isinstance(raw, Mapping) else it.text, links, context))
        examples = []
        for k, ex in enumerate(_EXAMPLES, 1):
            shown = [(f"N{i}", n, links, ctx) for i, (n, links, ctx) in enumerate(ex["neighbors"], 1)]
            examples.append(f"Example {k}:\n{_render(ex['query'], ex['entity'], ex['facts'], shown)}\n"
                            f"Reply: {json.dumps(ex['reply'], ensure_ascii=False)}")
        return (f"{self.RULES}\n\n" + "\n\n".join(examples) + "\n\nNow the real input.\n"
                f"{_render(inputs['query'], entity, list(inputs.get('facts') or []), rows)}\n"
                'Reply with {"scores": [{"id": "N1", "name": "...", "score": 0-10, "reason": "..."}, ...]}, '
                "one entry per neighbour.")

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        names = {it.id: name_key(name) for it, name in self.shown(inputs)}
        kept, dropped, seen = [], 0, set()
        for s in output.scores:  # type: ignore[attr-defined]
            ids, bad = filter_ids([s.id], list(names))
            if bad or name_key(s.name) != names[ids[0]]:
                dropped += 1  # an unknown ID, or a name that is not the one this ID was shown with
            elif ids[0] not in seen:
                seen.add(ids[0])
                kept.append(NeighborScore(id=ids[0], name=s.name, score=s.score, reason=s.reason))
        return NeighborScores(scores=kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[Any, int]:
        keys = key_map(self.items(inputs))
        return {keys[s.id]: s.score for s in output.scores}  # type: ignore[attr-defined]
