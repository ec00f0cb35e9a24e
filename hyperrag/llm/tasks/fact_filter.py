"""Recognition memory (HippoRAG 2): keep only the retrieved facts that are relevant to the query.

HippoRAG 2 retrieves candidate triples by embedding similarity, then asks an LLM which of them
actually bear on the question; the survivors seed Personalized PageRank. Facts are shown with short
IDs (``F1``...) and the reply lists the relevant IDs, which are checked against those shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import Item, block, key_map, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, filter_ids

SCHEMA_VERSION = "1"


class RelevantFacts(BaseModel):
    relevant_ids: IdList


def fact_items(facts: Sequence[Any]) -> list[Item]:
    """Facts as items ``F1..Fn``: a triple (tuple/list of 3 strings) is shown as a JSON list;
    ``(key, fact)`` pairs keep the caller's key; otherwise the key is the position."""
    items = []
    for i, f in enumerate(facts):
        key = i
        if isinstance(f, tuple) and len(f) == 2 and not isinstance(f[1], str) and f[1] is not None:
            key, f = f
        text = json.dumps(list(f), ensure_ascii=False) if isinstance(f, (list, tuple)) else str(f)
        items.append(Item(f"F{i + 1}", key, text))
    return items


class FactFilter(Task):
    """Inputs: ``query`` and ``facts`` (triples, strings, or (key, triple) pairs).

    ``value``: caller keys (positions by default) of the relevant facts, most relevant first,
    at most ``max_facts``.
    """

    name = "fact_filter"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = RelevantFacts
    max_tokens = 160
    ROLE = (
        "You filter facts for a question-answering system. Each fact is a [subject, relation, object] triple "
        "with an ID. Return the IDs of the facts that help answer the question, directly or as one step of a "
        "multi-hop chain, most relevant first. Return an empty list if none is relevant. Do not invent IDs."
    )

    def __init__(self, max_facts: int | None = 4) -> None:
        self.max_facts = max_facts

    @property
    def variant(self) -> str:
        return f"max{self.max_facts}" if self.max_facts else ""

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "facts", task=self.name)
        cap = f" Return at most {self.max_facts} IDs." if self.max_facts else ""
        return (f"Question:\n{block('data', inputs['query'])}\nFacts:\n"
                f"{render_items(fact_items(inputs['facts']), 'fact')}\n"
                f'Reply with {{"relevant_ids": ["F..", ...]}}.{cap}')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.relevant_ids, [it.id for it in fact_items(inputs["facts"])])  # type: ignore[attr-defined]
        return RelevantFacts(relevant_ids=kept[: self.max_facts] if self.max_facts else kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[Any]:
        keys = key_map(fact_items(inputs["facts"]))
        return [keys[i] for i in output.relevant_ids]  # type: ignore[attr-defined]
