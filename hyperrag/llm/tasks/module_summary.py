"""Module summary: a report for one community (module) of the knowledge graph.

Following GraphRAG community reports and HugRAG's module nodes: given the entities, relations and
(for higher levels) the summaries of child modules that make up a module, write a title, a summary
of what ties them together, and a few keywords used for retrieval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import make_items, render_items, require
from hyperrag.llm.tasks.base import Name, Task, Text

SCHEMA_VERSION = "1"


class ModuleReport(BaseModel):
    title: Name
    summary: Text
    keywords: list[Name] = Field(default_factory=list, max_length=12)


class ModuleSummary(Task):
    """Inputs: ``entities`` (strings ``"name: description"`` or (name, description) pairs),
    optional ``relations`` (strings) and ``child_summaries`` (strings), optional ``max_words``."""

    name = "module_summary"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = ModuleReport
    max_tokens = 512
    ROLE = (
        "You summarise one module of a knowledge graph: a group of closely connected entities. Write a short "
        "title naming what the module is about, a summary of the main entities and how they relate (what "
        "connects them, key facts, dates and roles), and up to 12 keywords a search for this topic would "
        "use. Use only the information given."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "entities", task=self.name)
        ents = [e if isinstance(e, str) else f"{e[0]}: {e[1]}" for e in inputs["entities"]]
        parts = ["Entities:", render_items(make_items(ents, "E"), "item")]
        if inputs.get("relations"):
            parts += ["Relations:", render_items(make_items(list(inputs["relations"]), "R"), "item")]
        if inputs.get("child_summaries"):
            parts += ["Sub-module summaries:", render_items(make_items(list(inputs["child_summaries"]), "S"), "item")]
        words = int(inputs.get("max_words", 120))
        parts.append(f'Reply with {{"title": "...", "summary": "...", "keywords": [...]}}; summary at most {words} words.')
        return "\n".join(parts)
