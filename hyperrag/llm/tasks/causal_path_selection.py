"""Causal path identification (HugRAG, its Figs 5 and 6): rerank a linearised subgraph into the causal items
that lead from the question to its answer, name the spurious ones, and write a draft answer.

Candidates are the nodes and edges of a retrieved subgraph, each shown with a short ID whose letter says what it
is (``N`` an entity node, ``M`` a module, ``E`` a relation edge; ``C`` a candidate of no stated kind), so the model
can follow paths at a low token cost and its reply can be checked. Two variants:

* ``spurious`` (the paper's main setting, Fig 5): the causal items most important first, the spurious items
  (only correlated, coincidental, topical hubs) least important first, and a draft answer;
* ``standard`` (the ablation, Fig 6): the causal items and the draft answer only.

The draft answer names no IDs and says "unknown" when the items do not hold the answer (no guessing). A candidate
mapping may carry ``passage_ids`` (the passages its node or edge was extracted from): provenance for analysis
and for the gold-informed oracle; it is never shown, so the prompt is the same with or without it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import Item, block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids

SCHEMA_VERSION = "2"
VARIANTS = ("standard", "spurious")
#: display-ID letter of each candidate kind (``kind`` of a candidate mapping)
KIND_PREFIX = {"node": "N", "module": "M", "edge": "E"}
UNKNOWN = "unknown"
DEFAULT_ANSWER_WORDS = 20


class CausalSelection(BaseModel):
    causal_ids: IdList
    draft_answer: Text = ""


class CausalAndSpurious(BaseModel):
    causal_ids: IdList
    spurious_ids: IdList = []
    draft_answer: Text = ""


def candidate_items(candidates: Sequence[Any]) -> list[Item]:
    """Display items: one counter per kind letter (``N1, N2, E1, M1``...), ``C`` for candidates of no kind."""
    kinds = [str(c.get("kind", "")) if isinstance(c, Mapping) else "" for c in candidates]
    if not any(k in KIND_PREFIX for k in kinds):
        return make_items(list(candidates), "C")
    base = make_items(list(candidates), "C")  # keys and texts as every task reads them
    counters: dict[str, int] = {}
    out = []
    for item, kind in zip(base, kinds):
        letter = KIND_PREFIX.get(kind, "C")
        counters[letter] = counters.get(letter, 0) + 1
        out.append(Item(f"{letter}{counters[letter]}", item.key, item.text))
    return out


def display_ids(kinds: Sequence[str]) -> list[str]:
    """The display IDs :func:`candidate_items` gives candidates of these kinds (for tables and logs)."""
    return [it.id for it in candidate_items([{"id": i, "text": "", "kind": k} for i, k in enumerate(kinds)])]


class CausalPathSelection(Task):
    """Inputs: ``query``, ``candidates`` (strings, (key, text) pairs or mappings with ``id``, ``text`` and
    optionally ``kind`` and ``passage_ids``); optional ``max_selected`` (causal items), ``max_spurious``,
    ``max_answer_words``.

    ``value``: ``{"kept": [caller keys], "spurious": [caller keys], "draft": str}`` (``spurious`` empty for the
    standard variant).
    """

    name = "causal_path_selection"
    SCHEMA_VERSION = SCHEMA_VERSION
    max_tokens = 384

    def __init__(self, variant: str = "spurious") -> None:
        if variant not in VARIANTS:
            raise ValueError(f"causal_path_selection variant {variant!r}; expected one of {VARIANTS}")
        self._variant = variant

    @property
    def variant(self) -> str:
        return self._variant

    def output_model(self) -> type[BaseModel]:
        return CausalSelection if self._variant == "standard" else CausalAndSpurious

    @property
    def ROLE(self) -> str:  # type: ignore[override]
        role = ("You are a careful analyst of cause and effect who reranks retrieved evidence. You get a question "
                "and the items of a retrieved graph, each with a short ID: entity nodes (N), modules that group "
                "entities (M) and relation edges between entities (E). Choose the items that together form the "
                "causal chain leading from the question to its answer and return their IDs in causal_ids, the most "
                "important first.")
        if self._variant == "spurious":
            role += (" Also return in spurious_ids the items that are the least useful: they only co-occur with "
                     "the question's topic, are coincidental or popular hubs without a mechanism; list them from "
                     "the least important upwards. An ID belongs to at most one of the two lists.")
        return role + (" Use only the items listed and write their IDs exactly as shown. In draft_answer give a "
                       "short draft of the answer that mentions no IDs; if the items do not hold the answer, "
                       f'write "{UNKNOWN}" rather than guess.')

    def items(self, inputs: Mapping[str, Any]) -> list[Item]:
        return candidate_items(list(inputs["candidates"]))

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "candidates", task=self.name)
        limits = []
        if inputs.get("max_selected"):
            limits.append(f"causal_ids: at most {int(inputs['max_selected'])} IDs")
        if self._variant == "spurious" and inputs.get("max_spurious"):
            limits.append(f"spurious_ids: at most {int(inputs['max_spurious'])} IDs")
        limits.append(f"draft_answer: at most {self.answer_words(inputs)} words")
        fmt = ('{"causal_ids": ["N2", "E1", ...], "draft_answer": "..."}' if self._variant == "standard"
               else '{"causal_ids": ["N2", "E1", ...], "spurious_ids": ["M3", ...], "draft_answer": "..."}')
        return (f"Question:\n{block('data', inputs['query'])}\nItems (ID and content):\n"
                f"{render_items(self.items(inputs), 'item')}\nLimits: {'; '.join(limits)}.\nReply with {fmt}.")

    @staticmethod
    def answer_words(inputs: Mapping[str, Any]) -> int:
        return int(inputs.get("max_answer_words") or DEFAULT_ANSWER_WORDS)

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        cap = int(inputs["max_selected"]) if inputs.get("max_selected") else None
        kept, dropped = filter_ids(output.causal_ids, shown)  # type: ignore[attr-defined]
        draft = self.clean_draft(output.draft_answer, shown, self.answer_words(inputs))  # type: ignore[attr-defined]
        if self._variant == "standard":
            return CausalSelection(causal_ids=kept[:cap], draft_answer=draft), dropped
        spurious, d2 = filter_ids(output.spurious_ids, shown)  # type: ignore[attr-defined]
        spurious = [i for i in spurious if i not in kept]  # a causal ID wins a conflict
        s_cap = int(inputs["max_spurious"]) if inputs.get("max_spurious") else None
        return CausalAndSpurious(causal_ids=kept[:cap], spurious_ids=spurious[:s_cap], draft_answer=draft), \
            dropped + d2

    @staticmethod
    def clean_draft(draft: str, shown: Sequence[str], words: int) -> str:
        """The draft without any shown ID (the prompt forbids them) and cut to ``words`` words."""
        if shown:
            pattern = re.compile(r"\b(" + "|".join(re.escape(s) for s in shown) + r")\b")
            draft = pattern.sub("", draft)
        parts = draft.replace("()", " ").replace("[]", " ").split()
        return " ".join(parts[:words])

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        spurious = getattr(output, "spurious_ids", [])
        return {"kept": [keys[i] for i in output.causal_ids],  # type: ignore[attr-defined]
                "spurious": [keys[i] for i in spurious],
                "draft": output.draft_answer}  # type: ignore[attr-defined]
