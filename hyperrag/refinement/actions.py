"""The three query-refinement actions of CDF-RAG — expand, simplify, decompose — carried out by the LLM
(``query_refinement`` task) or, without one, by documented deterministic stand-ins.

Every action turns a question into a *query set*; retrieval scores a passage by its best cosine over the set
(max fusion), and causal traversal seeds from every query of the set.

=========== ================================================ =================================================
action      with an LLM (``query_refinement``, mode=action)   LLM-free stand-in (deterministic)
=========== ================================================ =================================================
expand      the question + up to 3 rewrites adding synonyms,  pseudo-relevance feedback: the question + the
            aliases and implied entities                      ``expand_keywords`` most salient words of its top
                                                              dense passage (capitalised first, then frequent;
                                                              words already in the question skipped)
simplify    one short query: the core ask and key entities    the question without stop/filler words
decompose   2–5 ordered single-hop sub-questions (``#1``      the question split at relative-clause and
            placeholders removed) + the question              conjunction markers (who, which, where, that,
                                                              whose, when, in which, and ...), pieces of ≥ 2
                                                              words + the question
=========== ================================================ =================================================

A failed LLM call falls back to the stand-in for that question (recorded as ``source: heuristic``).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

from hyperrag.utils.stopwords import is_stopword

log = logging.getLogger(__name__)

ACTIONS: tuple[str, ...] = ("expand", "simplify", "decompose")

FILLER_WORDS = frozenset(["please", "tell", "me", "know", "wonder", "name", "find", "exactly", "actually", "really", "kind", "sort"])
_SPLIT = re.compile(r",?\s*\b(?:who|whom|whose|which|where|that|when|in which|of which|and|while|whereas)\b\s*",
                    re.IGNORECASE)
_WORDS = re.compile(r"[\w'\-\.]+", re.UNICODE)
_KEYWORD = re.compile(r"[A-Za-z][\w\-]+")
_PLACEHOLDER = re.compile(r"#\d+")


def simplify_query(question: str) -> str:
    """The question without stop and filler words (falls back to the question when nothing is left)."""
    words = [w.strip(".") for w in _WORDS.findall(question)]
    kept = [w for w in words if w and not is_stopword(w) and w.lower() not in FILLER_WORDS]
    return " ".join(kept) or question


def decompose_query(question: str, min_words: int = 2) -> list[str]:
    """Clause-level pieces of the question (relative clauses and conjunctions), each of ``>= min_words`` words."""
    cuts = [m for m in _SPLIT.finditer(question) if m.start() > 0]  # a leading wh-word starts the question
    bounds = [0] + [x for m in cuts for x in (m.start(), m.end())] + [len(question)]
    parts = [question[bounds[i] : bounds[i + 1]].strip(" ,?;.") for i in range(0, len(bounds), 2)]
    return [p for p in parts if len(p.split()) >= min_words]


def salient_keywords(text: str, exclude: str = "", k: int = 6) -> list[str]:
    """The ``k`` most salient words of ``text`` not in ``exclude``: capitalised words first, then by frequency."""
    skip = {w.lower() for w in _WORDS.findall(exclude)}
    words = [w for w in _KEYWORD.findall(text) if not is_stopword(w) and w.lower() not in skip]
    counts = Counter(words)
    first = {w: i for i, w in reversed(list(enumerate(words)))}
    ranked = sorted(counts, key=lambda w: (not w[0].isupper(), -counts[w], first[w]))
    out: list[str] = []
    for w in ranked:
        if w.lower() not in {o.lower() for o in out}:
            out.append(w)
        if len(out) == k:
            break
    return out


@dataclass
class Refinement:
    action: str
    queries: list[str]  # the query set used for retrieval
    rewrites: list[str]  # the new queries only (what semantic similarity is measured on)
    source: str  # llm | heuristic | none


class QueryRefiner:
    """Carries out an action on a batch of questions.

    Args:
        llm: an LLM for the ``query_refinement`` task; ``None``/unavailable → the stand-ins.
        use_llm: set False to force the stand-ins even with an LLM (e.g. cheap PPO training).
        expand_keywords: words added by the expand stand-in.
        top_passage: callable ``questions -> list[str]`` giving each question's best dense passage text (the
            expand stand-in's feedback document); the CDF-RAG retriever binds its dense index here.
    """

    def __init__(self, llm: LanguageModel | None = None, use_llm: bool = True, expand_keywords: int = 6,
                 top_passage: Callable[[list[str]], list[str]] | None = None) -> None:
        self.llm = llm
        self.use_llm = use_llm
        self.expand_keywords = expand_keywords
        self.top_passage = top_passage
        self.llm_calls = 0

    @property
    def llm_on(self) -> bool:
        return self.use_llm and bool(getattr(self.llm, "available", False))

    # ---- stand-ins -----------------------------------------------------------------------------------
    def heuristic(self, questions: Sequence[str], action: str) -> list[Refinement]:
        if action == "none":
            return [Refinement("none", [q], [], "none") for q in questions]
        if action == "simplify":
            return [Refinement(action, [s], [s], "heuristic") for s in map(simplify_query, questions)]
        if action == "decompose":
            out = []
            for q in questions:
                parts = [p for p in decompose_query(q) if p.casefold() != q.strip(" ?").casefold()]
                out.append(Refinement(action, parts + [q], parts, "heuristic"))
            return out
        if action == "expand":
            if self.top_passage is None:
                raise ValueError("the expand stand-in needs top_passage (a dense index) bound to the refiner")
            docs = self.top_passage(list(questions))
            out = []
            for q, doc in zip(questions, docs):
                kw = salient_keywords(doc, exclude=q, k=self.expand_keywords)
                expanded = f"{q} {' '.join(kw)}".strip()
                out.append(Refinement(action, [expanded], [expanded], "heuristic"))
            return out
        raise ValueError(f"unknown refinement action {action!r}; expected one of {ACTIONS + ('none',)}")

    # ---- LLM -----------------------------------------------------------------------------------------
    def with_llm(self, questions: Sequence[str], action: str) -> list[Refinement | None]:
        from hyperrag.llm.tasks import get_task

        task = get_task("query_refinement", mode=action)
        results = self.llm.complete_structured_batch(task, [{"query": q} for q in questions])
        self.llm_calls += len(questions)
        out: list[Refinement | None] = []
        for q, res in zip(questions, results):
            if not res.ok or not res.value:
                out.append(None)
                continue
            rewrites = [" ".join(_PLACEHOLDER.sub("", r).split()) for r in res.value]
            rewrites = [r for r in rewrites if r and r.casefold() != q.casefold()]
            if not rewrites:
                out.append(None)
                continue
            queries = rewrites if action == "simplify" else [q, *rewrites]
            out.append(Refinement(action, queries, rewrites, "llm"))
        return out

    def refine(self, questions: Sequence[str], actions: Sequence[str]) -> list[Refinement]:
        """One :class:`Refinement` per question (``actions[i]`` for ``questions[i]``)."""
        if len(questions) != len(actions):
            raise ValueError("one action per question")
        out: list[Refinement | None] = [None] * len(questions)
        for action in dict.fromkeys(actions):
            idx = [i for i, a in enumerate(actions) if a == action]
            qs = [questions[i] for i in idx]
            done: list[Refinement | None] = [None] * len(qs)
            if self.llm_on and action != "none":
                done = self.with_llm(qs, action)
            missing = [j for j, r in enumerate(done) if r is None]
            if missing:
                for j, r in zip(missing, self.heuristic([qs[j] for j in missing], action)):
                    done[j] = r
            for i, r in zip(idx, done):
                out[i] = r
        return [r for r in out if r is not None]


__all__ = ["ACTIONS", "QueryRefiner", "Refinement", "decompose_query", "salient_keywords",
           "simplify_query"]
