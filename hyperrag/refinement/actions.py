"""The three query-refinement actions of CDF-RAG — expand, simplify, decompose — carried out by the LLM
(``query_refinement`` task) or, without one, by documented deterministic stand-ins.

Every action turns a question into a *query set*; retrieval scores a passage by its best cosine over the set
(max fusion), and causal traversal seeds from every query of the set.

=========== ================================================ =================================================
action      with an LLM (``query_refinement``, mode=action,   LLM-free stand-in (deterministic)
            Appendix A.4's instructions)
=========== ================================================ =================================================
expand      the question + one line naming the key entities,  pseudo-relevance feedback: the question + the
            causal factors and scope it leaves implicit       ``expand_keywords`` most salient words of its top
                                                              dense passage (capitalised first, then frequent;
                                                              words already in the question skipped)
simplify    one concise, self-contained line with the core    the question without stop/filler words
            intent
decompose   2–4 self-contained sub-questions in a logical     the question split at relative-clause and
            order (any ``#1`` placeholder removed) + the      conjunction markers (who, which, where, that,
            question                                          whose, when, in which, and ...), pieces of ≥ 2
                                                              words + the question
=========== ================================================ =================================================

A failed LLM call falls back to the stand-in for that question (recorded as ``source: heuristic``); a reply whose
every rewrite is the query itself rewrote nothing: the action leaves that query as it is (no stand-in; a step that
changes no query is masked by the RL environment). Each call names the question the query descends from
(``origin``: a chain's later steps refine a rewrite); a model is not shown it, the gold oracle finds its gold by it.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
    """A question's refinement so far (a chain of actions, :meth:`QueryRefiner.step`).

    Attributes:
        action: the last action applied (``none`` before any).
        queries: the query set retrieval uses (max fusion over it).
        rewrites: every rewrite made so far (semantic refinement is measured on them).
        source: how the last action was carried out: ``llm`` | ``heuristic`` (stand-in, also an LLM call that
            failed) | ``none``.
        actions: the actions applied, in order.
        frontier: the queries the next action refines (the last action's rewrites; the question at first).
        question: the original question.
        llm_failed: LLM calls of this chain that failed (their stand-in ran instead).
    """

    action: str
    queries: list[str]
    rewrites: list[str]
    source: str
    actions: list[str] = field(default_factory=list)
    frontier: list[str] = field(default_factory=list)
    question: str = ""
    llm_failed: int = 0

    @classmethod
    def start(cls, question: str) -> Refinement:
        return cls("none", [question], [], "none", [], [question], question)

    @property
    def query_key(self) -> frozenset[str]:
        """The query set, case- and space-folded: a step that rewrites nothing leaves it equal to its parent's."""
        return frozenset(" ".join(q.casefold().split()) for q in self.queries)


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


class QueryRefiner:
    """Carries out actions on batches of questions, one step at a time.

    A step applies one action to every query of a refinement's frontier (the question at first, then the previous
    step's rewrites), so actions chain: ``decompose`` then ``expand`` expands each sub-question. Query-set
    semantics per action: ``simplify`` *replaces* what it simplified; ``expand`` and ``decompose`` *add* their
    rewrites (the LLM-free expand replaces: its expanded query contains the original one).

    Args:
        llm: an LLM for the ``query_refinement`` task; ``None``/unavailable → the stand-ins.
        use_llm: set False to force the stand-ins even with an LLM.
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
        self.llm_failed = 0

    @property
    def llm_on(self) -> bool:
        return self.use_llm and bool(getattr(self.llm, "available", False))

    # ---- one query, one action -----------------------------------------------------------------------
    def heuristic(self, queries: Sequence[str], action: str) -> list[tuple[list[str], bool]]:
        """The stand-in's rewrites of each query and whether they replace it."""
        if action == "simplify":
            return [([s], True) for s in map(simplify_query, queries)]
        if action == "decompose":
            return [([p for p in decompose_query(q) if p.casefold() != q.strip(" ?").casefold()], False)
                    for q in queries]
        if action == "expand":
            if self.top_passage is None:
                raise ValueError("the expand stand-in needs top_passage (a dense index) bound to the refiner")
            docs = self.top_passage(list(queries))
            return [([f"{q} {' '.join(salient_keywords(d, exclude=q, k=self.expand_keywords))}".strip()], True)
                    for q, d in zip(queries, docs)]
        raise ValueError(f"unknown refinement action {action!r}; expected one of {ACTIONS + ('none',)}")

    def with_llm(self, queries: Sequence[str], action: str,
                 origins: Sequence[str] | None = None) -> list[tuple[list[str], bool] | None]:
        """The LLM's rewrites of each query (None where the call failed; no rewrite where its every rewrite is
        the query itself).

        Args:
            origins: per query, the question it descends from (the task's ``origin`` input: not shown to a model;
                the gold oracle answers from it); ``None``: each query is a question.
        """
        from hyperrag.llm.tasks import get_task

        task = get_task("query_refinement", mode=action)
        origins = list(queries) if origins is None else list(origins)
        if len(origins) != len(queries):
            raise ValueError("one origin per query")
        results = self.llm.complete_structured_batch(task, [{"query": q, "origin": o} for q, o in zip(queries, origins)])
        self.llm_calls += len(queries)
        out: list[tuple[list[str], bool] | None] = []
        for q, res in zip(queries, results):
            if not res.ok:
                out.append(None)
                continue
            rewrites = [" ".join(_PLACEHOLDER.sub("", r).split()) for r in (res.value or [])]
            rewrites = [r for r in rewrites if r and r.casefold() != q.casefold()]
            out.append((rewrites, action == "simplify" and bool(rewrites)))
        return out

    # ---- chains --------------------------------------------------------------------------------------
    def step(self, refinements: Sequence[Refinement], actions: Sequence[str]) -> list[Refinement]:
        """Apply ``actions[i]`` to ``refinements[i]``'s frontier (``none`` leaves it as it is); LLM calls are
        batched over every frontier query of the batch that takes the same action."""
        if len(refinements) != len(actions):
            raise ValueError("one action per refinement")
        out = list(refinements)
        for action in dict.fromkeys(a for a in actions if a != "none"):
            owners = [i for i, a in enumerate(actions) if a == action]
            flat = [(i, q) for i in owners for q in refinements[i].frontier]
            queries = [q for _, q in flat]
            done: list[tuple[list[str], bool] | None] = [None] * len(flat)
            llm = self.llm_on
            if llm:
                done = self.with_llm(queries, action, [refinements[i].question for i, _ in flat])
            missing = [j for j, r in enumerate(done) if r is None]
            failed = {j for j in missing} if llm else set()
            self.llm_failed += len(failed)
            if missing:
                for j, res in zip(missing, self.heuristic([queries[j] for j in missing], action)):
                    done[j] = res
            for i in owners:
                r = refinements[i]
                js = [j for j, (o, _) in enumerate(flat) if o == i]
                new, queries_i = [], list(r.queries)
                for j in js:
                    rewrites, replaces = done[j]  # type: ignore[misc]
                    if replaces and rewrites:
                        queries_i = [q for q in queries_i if q != flat[j][1]]
                    new += rewrites
                queries_i = _unique(queries_i + new) or [r.question]
                source = "llm" if llm and not any(j in failed for j in js) else "heuristic"
                out[i] = Refinement(action, queries_i, _unique(r.rewrites + new), source, [*r.actions, action],
                                    _unique(new) or r.frontier, r.question,
                                    r.llm_failed + sum(j in failed for j in js))
        return out

    def refine(self, questions: Sequence[str], actions: Sequence[str]) -> list[Refinement]:
        """One step from the questions (``actions[i]`` for ``questions[i]``)."""
        if len(questions) != len(actions):
            raise ValueError("one action per question")
        return self.step([Refinement.start(q) for q in questions], actions)


__all__ = ["ACTIONS", "QueryRefiner", "Refinement", "decompose_query", "salient_keywords",
           "simplify_query"]
