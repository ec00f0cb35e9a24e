"""HugRAG's causal path identification over linearised subgraphs, and the answer from what it keeps.

For a batch of questions and their tables (:mod:`hyperrag.expansion.linearize`):

1. one ``causal_path_selection`` call per question (Figs 5/6) — ``spurious`` (the paper's main setting: causal
   items, spurious items and a draft answer) or ``standard`` (causal items and a draft: the ablation); every
   returned ID is validated against the IDs shown, invalid ones dropped and counted (``invalid_ids``). Variant
   ``off`` (the filter-off ablation) calls nothing and keeps the first ``max_selected`` rows, so the answer step
   reads as much evidence as with the filter;
2. one ``subgraph_answer`` call per question (Fig 7) whose evidence is the kept rows and the passages behind them
   (the caller supplies those), with the draft answer.

Failures never raise: a failed or empty selection is returned as such (``ok`` / ``kept``) — the caller counts it
and scores the query 0; a failed answer is ``""`` with ``answer_ok = False``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import torch

from hyperrag.config.validation import NonNegativeInt, PositiveInt, settings
from hyperrag.expansion.linearize import Table

if TYPE_CHECKING:
    from hyperrag.llm.tasks.answer_style import AnswerStyle
    from hyperrag.llm.tasks.base import PromptForm
    from hyperrag.protocols import Encoder, LanguageModel


@settings
class PathSelectionSettings:
    """HugRAG's ``path_selection``.

    Attributes:
        enabled: run the causal path identification (needs an LLM unless ``variant: off``).
        variant: ``spurious`` (causal + spurious items + draft: the paper's setting), ``standard`` (causal items +
            draft: ablation) or ``off`` (no LLM filter: the first ``max_selected`` rows are kept: ablation).
        max_rows: table rows shown (nodes and edges, the first in walk order); ``None``: every row of S_raw (the
            paper states no cap).
        max_selected: causal items kept at most (the evidence size the answer reads; ``off`` keeps this many).
        max_spurious: spurious items asked for at most.
        max_answer_words: draft answer length.
        answer: generate the answer from the kept subgraph (``subgraph_answer``).
        answer_passages: passages behind the kept items added to the answer's evidence.
        empty_selection: what an empty S* (the model kept nothing, or S_raw was empty) gets: ``answer`` (the
            answer step still runs, on the draft alone, as the paper's Algorithm 1 implies) or ``skip`` (no answer,
            scored 0: the earlier rule). A failed call is never answered. The ranking is empty either way.
        llm_free: the **LLM-free stand-in** for the filter where no LLM is available (not in the paper; labelled
            in the run's ``path_filter``): ``none`` (no S*: the fallback ranks S_raw, the earlier rule),
            ``similarity`` (S* = the ``max_selected`` rows of the table most similar to the question, by the
            embedder's cosine) or ``first`` (S* = the first ``max_selected`` rows: variant ``off``'s rule). No
            draft and no answer either way.
    """

    enabled: bool
    variant: Literal["spurious", "standard", "off"]
    max_rows: PositiveInt | None
    max_selected: PositiveInt
    max_spurious: NonNegativeInt
    max_answer_words: PositiveInt
    answer: bool
    answer_passages: NonNegativeInt
    empty_selection: Literal["answer", "skip"]
    llm_free: Literal["none", "similarity", "first"]


@dataclass
class Selection:
    """One question's selection: kept and spurious table rows (in the model's order), the draft answer,
    validation counts."""

    kept: list[int] = field(default_factory=list)
    spurious: list[int] = field(default_factory=list)
    draft: str = ""
    ok: bool = False
    invalid_ids: int = 0
    error: str | None = None


def first_rows(table: Table, n: int) -> Selection:
    """The first ``n`` rows of ``table`` (walk order) as a selection: variant ``off``'s rule and the ``first``
    LLM-free stand-in."""
    kept = list(range(min(len(table), n)))
    return Selection(kept=kept, ok=bool(kept), error=None if kept else "empty")


def similar_rows(query: torch.Tensor, rows: torch.Tensor, n: int) -> Selection:
    """The ``n`` rows most similar to the query, best first (ties by row order): the ``similarity`` LLM-free
    stand-in for the filter.

    Args:
        query: FloatTensor [D], the question's embedding (unit norm).
        rows: FloatTensor [R, D], the table rows' embeddings (unit norm).
        n: rows kept at most.
    """
    if rows.shape[0] == 0:
        return Selection(error="empty subgraph")
    order = torch.argsort(rows @ query, descending=True, stable=True)[:n]
    return Selection(kept=order.tolist(), ok=True)


def llm_free_selection(kind: Literal["none", "similarity", "first"], queries: torch.Tensor,
                       tables: Sequence[Table], encoder: Encoder, n: int) -> list[Selection]:
    """S* without an LLM (``path_selection.llm_free``): ``similarity`` or ``first`` per question (see
    :class:`PathSelectionSettings`).

    Args:
        kind: ``similarity`` | ``first`` (the settings' type; ``none`` means no stand-in and is refused).
        queries: FloatTensor [B, D], the questions' embeddings.
        tables: the B tables (S_raw as the filter would see it).
        encoder: embeds the rows (each distinct row text once).
        n: ``max_selected``.
    """
    if kind == "none":
        raise ValueError("path_selection.llm_free=none: no LLM-free stand-in to select with")
    if kind == "first":
        return [first_rows(t, n) for t in tables]
    texts = sorted({r for t in tables for r in t.rows})
    emb = encoder.encode(texts, desc="path rows").to(queries.device) if texts else queries.new_empty(0, 0)
    where = {t: i for i, t in enumerate(texts)}
    return [similar_rows(q, emb[[where[r] for r in t.rows]] if len(t) else emb[:0], n)
            for q, t in zip(queries, tables)]


class CausalPathSelector:
    """Args:
        llm: an available :class:`hyperrag.llm.LLM` (any, for ``variant: off`` without an answer).
        settings: :class:`PathSelectionSettings`.
        progress: tqdm bars.
        prompts: the prompt form of both calls, ``paper`` (Figs 5/6/7 as printed), ``paper_json`` or
            ``extended`` (HugRAG's ``prompts``).
    """

    def __init__(self, llm: LanguageModel | None, settings: PathSelectionSettings, progress: bool = False,
                 prompts: PromptForm = "paper") -> None:
        self.llm = llm
        self.prompts = prompts
        self.settings = settings
        self.variant = settings.variant
        self.progress = progress

    def select(self, questions: Sequence[str], tables: Sequence[Table], passage_ids: Sequence[str]) -> list[Selection]:
        """One selection per question; rows are table row indices. ``passage_ids`` names passage positions (the
        rows' provenance, attached to the candidates, never shown)."""
        out = [Selection() for _ in tables]
        if self.variant == "off":
            return [first_rows(table, self.settings.max_selected) for table in tables]
        from hyperrag.llm.tasks.causal_path_selection import CausalPathSelection

        assert self.llm is not None
        task = CausalPathSelection(self.variant, prompts=self.prompts)
        todo = [i for i, t in enumerate(tables) if len(t)]
        for i, t in enumerate(tables):
            if not len(t):
                out[i].error = "empty subgraph"
        if not todo:
            return out
        s = self.settings
        inputs = [{"query": questions[i], "candidates": tables[i].candidates(passage_ids),
                   "max_selected": s.max_selected, "max_spurious": s.max_spurious,
                   "max_answer_words": s.max_answer_words} for i in todo]
        results = self.llm.complete_structured_batch(task, inputs, progress="path selection" if self.progress else False)
        for i, res in zip(todo, results):
            sel = out[i]
            sel.invalid_ids = int(res.dropped_ids or 0)
            if not res.ok:
                sel.error = str(res.error_kind or "failed")
                continue
            sel.kept = [int(k) for k in res.value["kept"]]
            sel.spurious = [int(k) for k in res.value["spurious"]]
            sel.draft = str(res.value["draft"])
            sel.ok = bool(sel.kept)
            sel.error = None if sel.ok else "empty"
        return out

    def answer(self, questions: Sequence[str], evidence: Sequence[Sequence[dict[str, Any]]],
               drafts: Sequence[str], style: AnswerStyle = "short",
               answer_empty: Sequence[bool] | None = None) -> list[dict[str, Any]]:
        """``subgraph_answer`` per question with evidence (and those marked in ``answer_empty``: an empty S* still
        answered), in answer ``style`` (``short`` | ``explanatory``); returns ``{"answer", "answer_ok"[,
        "short_answer"][, "answer_error"]}``."""
        from hyperrag.llm.tasks.subgraph_answer import AnswerFromSubgraph

        out: list[dict[str, Any]] = [{"answer": "", "answer_ok": False} for _ in evidence]
        todo = [i for i, ev in enumerate(evidence) if ev or (answer_empty is not None and answer_empty[i])]
        if not todo:
            return out
        assert self.llm is not None
        inputs = []
        for i in todo:
            inp: dict[str, Any] = {"question": questions[i], "evidence": list(evidence[i])}
            if drafts[i]:
                inp["draft_answer"] = drafts[i]
            inputs.append(inp)
        results = self.llm.complete_structured_batch(AnswerFromSubgraph(style, prompts=self.prompts), inputs,
                                                     progress="answers" if self.progress else False)
        for i, res in zip(todo, results):
            if res.ok:
                out[i] = {**res.value, "answer_ok": True}
            else:
                out[i]["answer_error"] = str(res.error_kind or "failed")
        return out
