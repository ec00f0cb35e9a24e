"""Context coverage judge (CDF-RAG Appendix A.3's relevance, judged): how much of what a question needs does the
retrieved knowledge set K hold?

The model sees the question and K's passages with short IDs and returns the IDs of the passages that hold a fact
the answer needs (an intermediate fact of a multi-step answer included) and a coverage score from 0 (nothing the
answer needs) to 10 (everything the answer needs). The refinement reward takes the coverage of a refined query's K
minus the unrefined question's (:mod:`hyperrag.refinement.env`), so a refinement that brings in the missing facts
scores higher than not refining.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, key_map, make_items, render_items, require
from hyperrag.llm.tasks.base import IdList, Task, filter_ids

SCHEMA_VERSION = "1"


class Coverage(BaseModel):
    needed_ids: IdList = Field(default_factory=list)
    coverage: int = Field(ge=0, le=10)


class ContextCoverage(Task):
    """Inputs: ``question``, ``passages`` (``(id, text)`` pairs or texts). ``value``:
    ``{"coverage": float in [0, 1], "needed": [caller keys]}``."""

    name = "context_coverage"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Coverage
    max_tokens = 192
    ROLE = ("You judge whether retrieved evidence covers a question. Each passage has an ID. List the IDs of the "
            "passages that hold a fact the answer needs (including an intermediate fact of a multi-step answer), "
            "then rate from 0 to 10 how much of the information needed to answer the question the passages hold "
            "together: 0 = none of it, 10 = all of it. Use only the passages, not your own knowledge; passages that "
            "only share words with the question do not count.")

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(list(inputs["passages"]), "P")

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "question", "passages", task=self.name)
        return (f"Question:\n{block('data', inputs['question'])}\nPassages:\n"
                f"{render_items(self.items(inputs), 'passage')}\n"
                'Reply with {"needed_ids": ["P..", ...], "coverage": 0-10}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        kept, dropped = filter_ids(output.needed_ids, [it.id for it in self.items(inputs)])  # type: ignore[attr-defined]
        return Coverage(needed_ids=kept, coverage=output.coverage), dropped  # type: ignore[attr-defined]

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> dict[str, Any]:
        keys = key_map(self.items(inputs))
        return {"coverage": output.coverage / 10.0,  # type: ignore[attr-defined]
                "needed": [keys[i] for i in output.needed_ids]}  # type: ignore[attr-defined]
