"""Plain records shared by every reader: passages, queries, a corpus and a dataset."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str

    @property
    def content(self) -> str:
        """Title and text as one string — what embedders, BM25 and LLM prompts see."""
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True)
class SubQuestion:
    """One hop of a gold decomposition (MuSiQue ``question_decomposition``; 2WikiMultiHopQA's evidence triples,
    :mod:`hyperrag.data.evidence_hops`): the hop's question (``#1``... name earlier hops' answers), its answer,
    the passage that supports it (``None`` when unknown) and the entity it asks about (``#k`` for an earlier
    hop's answer; empty when not given: MuSiQue's is the part of ``"Subject >> relation"`` before ``>>``)."""

    question: str
    answer: str = ""
    gold_id: str | None = None
    subject: str = ""


@dataclass(frozen=True)
class Query:
    """A question with its gold annotations (all optional).

    Attributes:
        answers: accepted answer strings (aliases included).
        gold_ids: supporting passage ids.
        decomposition: the gold hops, in order (MuSiQue); what the oracle backend decomposes into.
        options: answer options of a multiple-choice question (shown to the reader).
        answer_index: position of the correct option in ``options``.
        type: the question's type where the dataset gives one (2WikiMultiHopQA: ``compositional``,
            ``comparison``, ``bridge_comparison``, ``inference``); metrics are also broken down by it.
        evidences: the gold knowledge triples ``(subject, relation, object)`` where the dataset gives them
            (2WikiMultiHopQA's Wikidata evidence, one per hop).
    """

    id: str
    question: str
    answers: tuple[str, ...] = ()
    gold_ids: tuple[str, ...] = ()
    decomposition: tuple[SubQuestion, ...] = ()
    options: tuple[str, ...] = ()
    answer_index: int | None = None
    type: str = ""
    evidences: tuple[tuple[str, str, str], ...] = ()


@dataclass
class Corpus:
    passages: list[Passage]
    source: str = ""
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index = {p.id: i for i, p in enumerate(self.passages)}

    def __len__(self) -> int:
        return len(self.passages)

    def __getitem__(self, i: int) -> Passage:
        return self.passages[i]

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.passages]

    def position(self, passage_id: str) -> int:
        return self._index[passage_id]

    def __contains__(self, passage_id: str) -> bool:
        return passage_id in self._index


@dataclass
class Dataset:
    """A corpus, its queries, and optionally a precomputed OpenIE file for it."""

    name: str
    corpus: Corpus
    queries: list[Query]
    openie_path: Path | None = None
    # "file": use openie_path; "llm": extract with the configured LLM (the file is the fallback without one)
    openie_source: str = "file"
    # where openie_path came from, set by hyperrag.runners.prepare.resolve_openie: {"source": "spacy" | "llm" |
    # "file" | "none", "model": ..., "path": ...}; recorded as ``extraction`` in metrics.json and run_info.json
    extraction: dict[str, Any] | None = None
