"""Query refinement (CDF-RAG §2.2, Appendix A.4): rewrite a question for causal retrieval — expand, simplify or
decompose.

CDF-RAG's refinement policy picks one of three actions; each is a prompt here carrying every step and guideline of
the paper's template for it (Appendix A.4), in our own words, with the template's constraints:

* ``expand``: one line that makes a vague or underspecified question specific — the key entities, causal
  mechanisms or factors, and the domain or scope it leaves implicit — keeping its topic and intent (1 query);
* ``simplify``: one concise, self-contained line with the question's core intent, no sub-questions (1 query);
* ``decompose``: 2–4 clear, self-contained sub-questions, each answerable on its own (no reference to another's
  answer), in a logical order that builds toward the original question, no repeated wording, no numbering.

The templates' optional "Provided contexts" is the optional ``context`` input (background shown before the
question); CDF-RAG's retriever leaves it blank, as the paper's templates allow.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.prompting import block, require
from hyperrag.llm.tasks.base import Name, Task

SCHEMA_VERSION = "2"
MODES = ("expand", "simplify", "decompose")

_ROLES = {
    "expand": (
        "You expand a vague or underspecified question into a more detailed version for causal retrieval, one that "
        "makes its intent clear and specific by bringing in the dimensions, factors or examples it leaves out. "
        "Steps: (1) find the context or assumptions the question leaves implicit; (2) rewrite it so that it names "
        "the key entities, the causal mechanisms or factors, and the domain it is about; (3) make sure the expanded "
        "question leads to a targeted, informative answer. Guidelines: write the expanded question as a single "
        "line; keep the core topic, adding only specificity or scope; preserve the original intent while making "
        "the question more complete. Give exactly one expanded question."
    ),
    "simplify": (
        "You simplify a complex or ambiguous question into a clearer, more direct version for causal retrieval that "
        "keeps its original intent: less complexity, the same meaning. Steps: (1) find the ambiguity, compound "
        "phrasing or indirect wording; (2) rewrite it as one concise, self-contained question; (3) make sure the "
        "result can be understood and answered on its own. Guidelines: use precise language and avoid abstract or "
        "technical phrasing; do not produce several sub-questions; keep the simplified question to one line; "
        "preserve the core intent of the original. Give exactly one simplified question."
    ),
    "decompose": (
        "You decompose a complex, multi-hop question into simpler, manageable sub-questions that isolate and "
        "uncover the causal or explanatory mechanisms behind it. Steps: (1) analyse the question for its underlying "
        "causal or semantic components; (2) rewrite it as a list of two to four clear, concise, self-contained "
        "sub-questions that can each be answered independently; (3) keep a logical order, each sub-question "
        "building toward the answer of the original question. Guidelines: do not repeat the same wording across "
        "sub-questions; every sub-question must be answerable on its own, so name things explicitly instead of "
        "referring to another sub-question or its answer; one sub-question per list entry; no numbering, bullets or "
        "explanations, only the sub-questions themselves."
    ),
}
_LIMITS = {"expand": (1, 1), "simplify": (1, 1), "decompose": (2, 4)}  # (at least, at most) queries kept
_BULLET = re.compile(r"^\s*(?:[-*•]|\(?\d{1,2}[.)]|[a-dA-D][.)])\s+")


class Queries(BaseModel):
    queries: list[Name] = Field(min_length=1, max_length=8)


class SubQuestions(BaseModel):
    queries: list[Name] = Field(min_length=2, max_length=8)  # the schema asks for at least two


class QueryRefinement(Task):
    """Inputs: ``query``; optionally ``context`` (background passages or a domain note: the templates' "Provided
    contexts") and ``origin`` (the question ``query`` descends from, when it is a rewrite: never shown to the model,
    which refines the query it is shown; the gold oracle answers from it — :data:`hyperrag.llm.oracle.answers.
    ORIGIN`). ``value``: the refined queries (expand and simplify: one; decompose: two to four sub-questions —
    fewer than two distinct ones is an invalid reply, re-asked)."""

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

    def output_model(self) -> type[BaseModel]:
        return SubQuestions if self.mode == "decompose" else Queries

    def user(self, inputs: Mapping[str, Any]) -> str:
        require(inputs, "query", task=self.name)
        context = str(inputs.get("context") or "").strip()
        shown = f"Provided context:\n{block('data', context)}\n" if context else ""
        label = {"expand": "Original question", "simplify": "Original question", "decompose": "Multi-hop question"}
        reply = ('{"queries": ["<sub-question>", "<sub-question>", ...]}' if self.mode == "decompose"
                 else '{"queries": ["<the ' + ("expanded" if self.mode == "expand" else "simplified") + ' question>"]}')
        return f"{shown}{label[self.mode]}:\n{block('data', inputs['query'])}\nReply with {reply}."

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        seen: set[str] = set()
        out = []
        for q in output.queries:  # type: ignore[attr-defined]
            q = " ".join(_BULLET.sub("", q).split())
            if q and q.casefold() not in seen:
                seen.add(q.casefold())
                out.append(q)
        least, most = _LIMITS[self.mode]
        if len(out) < least:
            raise OutputInvalid(f"{self.mode} needs at least {least} distinct sub-questions, got {len(out)}")
        return self.output_model()(queries=out[:most]), 0

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[str]:
        return list(output.queries)  # type: ignore[attr-defined]
