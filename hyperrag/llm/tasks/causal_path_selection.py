"""Causal path selection with short IDs (HugRAG / CDF-RAG): keep the candidates that form the causal
chain answering the question.

Candidates (facts, relation paths or nodes) are shown with short IDs (``C1``, ``C2``...) to save
tokens and make the reply checkable. Two variants:

* ``standard``: return the IDs of the candidates needed to answer;
* ``spurious`` (spurious-aware): also name candidates that look relevant but are only correlated,
  coincidental or confounded, so they can be pruned explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, filter_ids

SCHEMA_VERSION = "1"
VARIANTS = ("standard", "spurious")


class Selected(BaseModel):
    selected_ids: IdList


class KeptAndSpurious(BaseModel):
    kept_ids: IdList
    spurious_ids: IdList


class CausalPathSelection(Task):
    """Inputs: ``query``, ``candidates`` (strings, (key, text) pairs or mappings); optional
    ``max_selected``. ``value``: standard → list of caller keys; spurious →
    ``{"kept": [...], "spurious": [...]}``."""

    name = "causal_path_selection"
    SCHEMA_VERSION = SCHEMA_VERSION
    max_tokens = 256

    def __init__(self, variant: str = "spurious") -> None:
        if variant not in VARIANTS:
            raise ValueError(f"causal_path_selection variant {variant!r}; expected one of {VARIANTS}")
        self._variant = variant

    @property
    def variant(self) -> str:
        return self._variant

    def output_model(self) -> type[BaseModel]:
        return Selected if self._variant == "standard" else KeptAndSpurious

    @property
    def ROLE(self) -> str:  # type: ignore[override]
        base = ("You select evidence for answering a question by causal reasoning. Each candidate is a fact or "
                "a path of relations with an ID. Keep the candidates that, step by step, lead from the question's "
                "entities to its answer through cause-and-effect or necessary links.")
        if self._variant == "standard":
            return base + " Return their IDs, most important first."
        return base + (" Return their IDs as kept_ids, most important first. Put candidates that look relevant but "
                       "are only correlated, coincidental, confounded or about a different cause in spurious_ids. "
                       "An ID appears in at most one list; ignore the rest.")

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["candidates"]), "C")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", "candidates", task=self.name)
        cap = f" Keep at most {int(inputs['max_selected'])}." if inputs.get("max_selected") else ""
        fmt = ('{"selected_ids": ["C1", ...]}' if self._variant == "standard"
               else '{"kept_ids": ["C1", ...], "spurious_ids": ["C4", ...]}')
        return (f"Question:\n{block('data', inputs['query'])}\nCandidates:\n"
                f"{render_items(self.items(inputs), 'item')}\nReply with {fmt}.{cap}")

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        cap = int(inputs["max_selected"]) if inputs.get("max_selected") else None
        if self._variant == "standard":
            kept, dropped = filter_ids(output.selected_ids, shown)  # type: ignore[attr-defined]
            return Selected(selected_ids=kept[:cap]), dropped
        kept, d1 = filter_ids(output.kept_ids, shown)  # type: ignore[attr-defined]
        spurious, d2 = filter_ids(output.spurious_ids, shown)  # type: ignore[attr-defined]
        spurious = [i for i in spurious if i not in kept]  # a kept ID wins a conflict
        return KeptAndSpurious(kept_ids=kept[:cap], spurious_ids=spurious), d1 + d2

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> Any:
        keys = key_map(self.items(inputs))
        if self._variant == "standard":
            return [keys[i] for i in output.selected_ids]  # type: ignore[attr-defined]
        return {"kept": [keys[i] for i in output.kept_ids],  # type: ignore[attr-defined]
                "spurious": [keys[i] for i in output.spurious_ids]}  # type: ignore[attr-defined]
