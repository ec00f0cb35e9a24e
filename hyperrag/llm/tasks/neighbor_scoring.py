"""Query-aware neighbour scoring (CatRAG): rate each neighbour of a node 0–10 for the query.

CatRAG reweights graph edges per query before Personalized PageRank: for a seed node, an LLM rates
how useful moving to each neighbour is for answering the question. Neighbours carry short IDs
(``N1``...); the reply's IDs are checked and scores clamped to 0–10.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, field_validator

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import Task, filter_ids

SCHEMA_VERSION = "1"


class NeighborScore(BaseModel):
    id: str = Field(max_length=40)
    score: int

    @field_validator("score", mode="before")
    @classmethod
    def _clamp(cls, v: Any) -> int:
        return max(0, min(10, round(float(v))))


class NeighborScores(BaseModel):
    scores: list[NeighborScore] = Field(max_length=64)


class NeighborScoring(Task):
    """Inputs: ``query``, ``node`` (the current entity/passage text), ``neighbors`` (strings,
    (key, text) pairs or mappings; the text may include the connecting relation).

    ``value``: ``{caller_key: score / 10}`` for every neighbour the reply scored validly.
    """

    name = "neighbor_scoring"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = NeighborScores
    max_tokens = 384
    ROLE = (
        "You guide a graph search for answering a question. From the current node, rate every neighbour "
        "with an integer from 0 (useless for this question) to 10 (essential next step toward the answer). "
        "Judge by whether following the neighbour helps complete the reasoning chain, not by word overlap."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["neighbors"]), "N")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "node", "neighbors", task=self.name)
        return (f"Question:\n{block('data', inputs['query'])}\nCurrent node:\n{block('node', inputs['node'])}\n"
                f"Neighbours:\n{render_items(self.items(inputs), 'item')}\n"
                'Reply with {"scores": [{"id": "N1", "score": 0-10}, ...]} covering every neighbour.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        kept, dropped, seen = [], 0, set()
        for s in output.scores:  # type: ignore[attr-defined]
            ids, bad = filter_ids([s.id], shown)
            if bad:
                dropped += 1
            elif ids[0] not in seen:
                seen.add(ids[0])
                kept.append(NeighborScore(id=ids[0], score=s.score))
        return NeighborScores(scores=kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[Any, float]:
        keys = key_map(self.items(inputs))
        return {keys[s.id]: s.score / 10.0 for s in output.scores}  # type: ignore[attr-defined]
