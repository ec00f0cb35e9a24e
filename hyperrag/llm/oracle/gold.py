"""The gold annotations an oracle answers from: per question, its supporting passages, hops and answers.

A :class:`GoldIndex` is built from the query file in use (:class:`~hyperrag.data.types.Dataset`) and looked up
by the *text* a task shows (the question in its inputs), never by ids the task did not show. It also decides
whether a shown item comes from a gold passage:

* a passage (or passage excerpt) is gold when its normalised text is contained in a gold passage's text;
* a fact ``[s, r, o]`` is gold when a gold passage's OpenIE triples hold it, or (no OpenIE for the corpus) when
  one gold passage names both ``s`` and ``o``;
* a name (an entity, a neighbour) is gold when it occurs, as whole words, in a gold passage;
* an item that carries provenance (``passage_ids`` / ``sources`` in a candidate mapping) is gold when one of
  those passages is.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from hyperrag.data.types import Dataset, Passage, Query
from hyperrag.utils.answers import mentions
from hyperrag.utils.hashing import text_digest

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
_PLACEHOLDER = re.compile(r"#(\d+)")
#: an excerpt shorter than this is too short to attribute to one passage by containment
MIN_EXCERPT_CHARS = 16
#: a shown excerpt is compared by its first this many normalised characters (excerpts are clipped)
EXCERPT_PREFIX_CHARS = 240


def normalize(text: Any) -> str:
    """Lower-cased NFKC text with every run of non-word characters as one space."""
    return " ".join(_NON_WORD.sub(" ", unicodedata.normalize("NFKC", str(text)).casefold()).split())


def render_hop(question: str) -> str:
    """MuSiQue's ``"Subject >> relation"`` hop as plain words (``"Subject relation"``)."""
    return " ".join(question.replace(">>", " ").split())


@dataclass(frozen=True)
class GoldPassage:
    id: str
    title: str
    content: str  # normalised title + text
    text: str  # normalised text
    triples: frozenset[tuple[str, str, str]] = frozenset()  # normalised OpenIE triples


@dataclass(frozen=True)
class Hop:
    """One gold sub-question: as decomposed (``#k`` kept), resolved (``#k`` → gold answer k), the entity it
    asks about (resolved), its answer and its supporting passage; and, unresolved, the subject as written
    (``"#1"`` or an entity: ``SubQuestion.subject``, else MuSiQue's part before ``>>``; "" when neither) and the
    relation (MuSiQue's part after ``>>``; "" otherwise)."""

    question: str
    resolved: str
    subject: str
    answer: str
    passage: GoldPassage | None
    raw_subject: str = ""
    relation: str = ""


@dataclass
class QueryGold:
    """Everything gold about one query."""

    query: Query
    passages: list[GoldPassage]  # hop order first (when the decomposition names them), then the rest
    hops: list[Hop] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return self.query.answers[0] if self.query.answers else ""

    # ---- is a shown item gold? ------------------------------------------------------------------------
    def passage_of_text(self, text: Any) -> GoldPassage | None:
        """The gold passage a shown passage (or excerpt of one) is, if any."""
        norm = normalize(text)
        if len(norm) < MIN_EXCERPT_CHARS:
            return next((p for p in self.passages if norm and norm in (p.text, p.content)), None)
        probe = norm[:EXCERPT_PREFIX_CHARS]
        for p in self.passages:
            if probe in p.content or p.text in norm:
                return p
        return None

    def is_gold_fact(self, triple: Sequence[Any]) -> bool:
        s, r, o = (normalize(x) for x in triple)
        for p in self.passages:
            if p.triples:
                if (s, r, o) in p.triples:
                    return True
            elif mentions(p.content, s) and mentions(p.content, o):
                return True
        return False

    def is_gold_name(self, name: Any) -> bool:
        norm = normalize(name)
        return len(norm) >= 2 and any(mentions(p.content, norm) for p in self.passages)

    def is_gold_source(self, passage_ids: Iterable[Any]) -> bool:
        gold = {p.id for p in self.passages}
        return any(str(pid) in gold for pid in passage_ids)


class GoldIndex:
    """Gold annotations of a dataset, found by question text.

    Args:
        dataset: the query file in use and its corpus (and OpenIE file, for gold facts).
    """

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._by_question: dict[str, QueryGold] = {}
        self._by_hop: dict[str, tuple[QueryGold, Hop]] = {}
        triples = self._openie_triples()
        corpus = dataset.corpus
        for q in dataset.queries:
            gold_passages = {pid: self._passage(corpus.position(pid), triples) for pid in q.gold_ids
                             if pid in corpus}
            hops: list[Hop] = []
            answers: list[str] = []
            for h in q.decomposition:
                text = render_hop(h.question)
                resolved = _resolve(text, answers)
                musique = ">>" in h.question
                raw_subject = h.subject or (render_hop(h.question.split(">>")[0]) if musique else "")
                relation = render_hop(h.question.split(">>", 1)[1]) if musique else ""
                subject = _resolve(raw_subject, answers) if raw_subject else ""
                hops.append(Hop(text, resolved, subject, h.answer, gold_passages.get(h.gold_id or ""), raw_subject,
                                relation))
                answers.append(h.answer)
            ordered = [h.passage for h in hops if h.passage is not None]
            ordered += [p for p in gold_passages.values() if p not in ordered]
            qg = QueryGold(q, list(dict.fromkeys(ordered)), hops)
            self._by_question.setdefault(normalize(q.question), qg)
            for h in hops:
                for form in (h.question, h.resolved):
                    self._by_hop.setdefault(normalize(form), (qg, h))

    def _openie_triples(self) -> list[list[tuple[str, str, str]]] | None:
        path = self.dataset.openie_path
        if path is None:
            return None
        from hyperrag.data.openie import read_openie

        return read_openie(path, self.dataset.corpus).triples

    def _passage(self, position: int, triples: list[list[tuple[str, str, str]]] | None) -> GoldPassage:
        p: Passage = self.dataset.corpus[position]
        facts: frozenset[tuple[str, str, str]] = frozenset()
        if triples is not None:
            facts = frozenset((normalize(s), normalize(r), normalize(o)) for s, r, o in triples[position])
        return GoldPassage(p.id, p.title, normalize(p.content), normalize(p.text), facts)

    def find(self, question: Any) -> QueryGold | None:
        """The query whose question is ``question`` (normalised exact match), else ``None``."""
        return self._by_question.get(normalize(question))

    def find_hop(self, question: Any) -> tuple[QueryGold, Hop] | None:
        """The query and gold hop whose (resolved or raw) sub-question is ``question``."""
        return self._by_hop.get(normalize(question))

    @cached_property
    def digest(self) -> str:
        """A hash of the gold annotations (part of the oracle's cache key: other gold → other replies)."""
        # a hop's own subject (2Wiki's evidence hops) joins its entry only where one is given: MuSiQue's blob,
        # and the replies cached under its digest, are unchanged
        blob = [(q.id, q.question, list(q.answers), list(q.gold_ids),
                 [(h.question, h.answer, h.gold_id, *((h.subject,) if h.subject else ())) for h in q.decomposition],
                 list(q.options), q.answer_index) for q in self.dataset.queries]
        # the JSON text as written since the oracle's first release (order kept, non-ASCII as is): the digest, and
        # the oracle replies cached under it, stay the same
        return text_digest(json.dumps([self.dataset.name, blob], ensure_ascii=False), length=16)

    def __len__(self) -> int:
        return len(self._by_question)


def _resolve(text: str, answers: Sequence[str]) -> str:
    """``#k`` placeholders replaced by the k-th gold answer (those not yet known are kept)."""
    return _PLACEHOLDER.sub(lambda m: answers[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(answers)
                            else m.group(0), text)


def item_sources(value: Any) -> list[Any] | None:
    """Provenance a caller attached to a shown candidate (``passage_ids`` or ``sources``), if any."""
    if isinstance(value, Mapping):
        for key in ("passage_ids", "sources"):
            if isinstance(value.get(key), (list, tuple, set, frozenset)):
                return list(value[key])
    return None
