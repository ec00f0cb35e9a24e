"""Query refinement (CDF-RAG): rewrite a question to retrieve better — expand, simplify or decompose.

CDF-RAG refines the user query before causal retrieval; its refinement policy picks one of three
actions, each a prompt here:

* ``expand``: add synonyms, aliases and implied entities (up to 3 expanded queries);
* ``simplify``: strip the question to its core ask (1 query);
* ``decompose``: split a multi-hop question into ordered single-hop sub-questions (2–5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Name, Task

SCHEMA_VERSION = "1"
MODES = ("expand", "simplify", "decompose")

_ROLES = {
    "expand": ("You rewrite search queries to improve recall. Produce up to three alternative versions of the "
               "question that add synonyms, aliases, full names and entities the question implies, keeping "
               "its meaning."),
    "simplify": ("You rewrite search queries to improve precision. Produce one short query that keeps only the "
                 "question's core ask and its key entities, dropping filler and nested clauses."),
    "decompose": ("You break multi-hop questions into single-hop sub-questions. Produce two to five ordered "
                  "sub-questions; a later one may refer to the answer of an earlier one as #1, #2, and so on. "
                  "Answering them in order must answer the original question."),
}
_LIMITS = {"expand": 3, "simplify": 1, "decompose": 5}


class Queries(BaseModel):
    queries: list[Name] = Field(min_length=1, max_length=5)


class QueryRefinement(Task):
    """Inputs: ``query``. ``value``: the list of refined queries (trimmed to the mode's limit)."""

    name = "query_refinement"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = Queries
    max_tokens = 256

    def __init__(self, mode: str = "decompose") -> None:
        if mode not in MODES:
            raise ValueError(f"query_refinement mode {mode!r}; expected one of {MODES}")
        self.mode = mode

    @property
    def variant(self) -> str:
        return self.mode

    @property
    def ROLE(self) -> str:  # type: ignore[override]
        return _ROLES[self.mode]

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", task=self.name)
        return f"Question:\n{block('data', inputs['query'])}\nReply with {{\"queries\": [...]}}."

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        seen: set[str] = set()
        out = []
        for q in output.queries:  # type: ignore[attr-defined]
            if q.casefold() not in seen:
                seen.add(q.casefold())
                out.append(q)
        return Queries(queries=out[: _LIMITS[self.mode]]), 0

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[str]:
        return list(output.queries)  # type: ignore[attr-defined]
