"""The knowledge-rewriting LLM task of CDF-RAG: retrieved passages + causal paths → a compact causal context.

Follows the task contract of :mod:`hyperrag.llm.tasks` (one prompt, one output schema, one parser); it is
used as an instance (``llm.complete_structured(CausalContextRewrite(), inputs)``), so it needs no registry
entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, make_items, render_items, require
from hyperrag.llm.tasks.base import Name, Task, Text

SCHEMA_VERSION = "1"


class Link(BaseModel):
    cause: Name
    effect: Name


class CausalContext(BaseModel):
    summary: Text
    causal_links: list[Link] = Field(default_factory=list, max_length=12)


class CausalContextRewrite(Task):
    """Inputs: ``question``, ``passages`` (strings / (key, text) pairs / mappings), ``causal_pairs``
    (``(cause, effect)`` pairs found by causal retrieval).

    ``value``: ``{"summary": str, "links": [(cause, effect), ...]}`` (duplicate links dropped).
    """

    name = "causal_context_rewrite"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = CausalContext
    max_tokens = 512
    ROLE = (
        "You condense retrieved evidence into a compact causal context for answering a question. Using only the "
        "passages and the candidate causal pairs, write a short summary of the facts the question needs, and "
        "list the cause-and-effect links that the evidence supports and that matter for the question, each as "
        "a short cause phrase and effect phrase. Keep each link in the direction the evidence states; leave out "
        "pairs the evidence does not support. Add nothing from outside knowledge."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "passages", "causal_pairs", task=self.name)
        pairs = [f"{c} → {e}" for c, e in inputs["causal_pairs"]]
        pairs_txt = (f"Candidate causal pairs (cause → effect):\n{render_items(make_items(pairs, 'C'), 'fact')}\n"
                     if pairs else "")
        return (f"Passages:\n{render_items(self.items(inputs), 'passage')}\n{pairs_txt}"
                f"Question:\n{block('data', inputs['question'])}\n"
                'Reply with {"summary": "...", "causal_links": [{"cause": "...", "effect": "..."}, ...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        seen: set[tuple[str, str]] = set()
        links = []
        for link in output.causal_links:  # type: ignore[attr-defined]
            key = (link.cause.casefold(), link.effect.casefold())
            if key not in seen and key[0] != key[1]:
                seen.add(key)
                links.append(link)
        return CausalContext(summary=output.summary, causal_links=links), 0  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        return {"summary": output.summary,  # type: ignore[attr-defined]
                "links": [(link.cause, link.effect) for link in output.causal_links]}  # type: ignore[attr-defined]


__all__ = ["CausalContext", "CausalContextRewrite", "Link"]
