"""Missing-concept suggestions (HyperRAG): what is still missing to answer the question?

After a retrieval round, the model reads the question and the evidence gathered so far, says whether
it suffices, and if not names the entities/concepts (and follow-up questions) to retrieve next —
the signal that drives the next expansion round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, make_items, render_items, require
from hyperrag.llm.tasks.base import Name, Task

SCHEMA_VERSION = "1"


class Missing(BaseModel):
    sufficient: bool
    missing_concepts: list[Name] = Field(default_factory=list, max_length=8)
    follow_up_questions: list[Name] = Field(default_factory=list, max_length=4)


class MissingConcepts(Task):
    """Inputs: ``query``, ``passages`` (evidence so far; may be empty)."""

    name = "missing_concepts"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Missing
    max_tokens = 256
    ROLE = (
        "You check whether retrieved evidence is enough to answer a question. Set sufficient to true only if "
        "the passages together contain every fact the answer needs. Otherwise list the specific entities or "
        "concepts whose information is still missing (names, not sentences) and up to four short follow-up "
        "questions that would retrieve it. Do not answer the question."
    )

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", task=self.name)
        passages = list(inputs.get("passages") or [])
        ev = render_items(make_items(passages, "P"), "passage") if passages else "(no evidence yet)"
        return (f"Question:\n{block('data', inputs['query'])}\nEvidence so far:\n{ev}\n"
                'Reply with {"sufficient": true/false, "missing_concepts": [...], "follow_up_questions": [...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        q = str(inputs["query"]).casefold()
        seen: set[str] = set()
        concepts = []
        for c in output.missing_concepts:  # type: ignore[attr-defined]
            if c.casefold() not in seen and c.casefold() != q:
                seen.add(c.casefold())
                concepts.append(c)
        return Missing(sufficient=output.sufficient, missing_concepts=concepts,  # type: ignore[attr-defined]
                       follow_up_questions=output.follow_up_questions), 0  # type: ignore[attr-defined]
