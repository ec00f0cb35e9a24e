"""LLM causal path selection over linearised expansion subgraphs, and answers grounded in what it keeps.

For a batch of questions and their tables (:mod:`hyperrag.expansion.linearize`):

1. one ``causal_path_selection`` call per question — ``spurious`` (default: kept IDs plus an explicit list of
   spurious IDs) or ``standard`` (kept IDs only, the ablation); every returned ID is validated against the
   IDs shown, invalid ones are dropped and counted (``invalid_ids``);
2. one ``grounded_answer`` call per question whose evidence is the kept rows only (plus, optionally, the
   passages behind the kept items, which the caller supplies).

Failures never raise: a failed selection keeps nothing (the caller falls back to its expansion ranking), a
failed answer is an empty string with ``answer_ok = False``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from hyperrag.config.validation import NonNegativeInt, PositiveInt, settings
from hyperrag.expansion.linearize import Table

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


@settings
class PathSelectionSettings:
    """HugRAG's ``path_selection``.

    Attributes:
        enabled: select with the LLM (without one: off).
        variant: ``spurious`` (kept IDs plus explicit spurious IDs) or ``standard`` (kept IDs only: ablation).
        max_rows: table rows shown.
        max_selected: ask the model to keep at most this many rows (``None`` = no limit).
        answer: generate the grounded answer from the kept rows.
        answer_passages: passages behind the kept items added to the answer's evidence.
    """

    enabled: bool
    variant: Literal["spurious", "standard"]
    max_rows: PositiveInt
    max_selected: PositiveInt | None
    answer: bool
    answer_passages: NonNegativeInt


@dataclass
class Selection:
    """One question's selection: kept and spurious node ids (in the model's order), validation counts."""

    kept: list[int] = field(default_factory=list)
    spurious: list[int] = field(default_factory=list)
    ok: bool = False
    invalid_ids: int = 0
    error: str | None = None


class CausalPathSelector:
    """Args:
        llm: an available :class:`hyperrag.llm.LLM`.
        settings: the variant and the row cap (:class:`PathSelectionSettings`).
        progress: tqdm bars.
    """

    def __init__(self, llm: LanguageModel, settings: PathSelectionSettings, progress: bool = False) -> None:
        self.llm = llm
        self.variant = settings.variant
        self.max_selected = settings.max_selected
        self.progress = progress

    def select(self, questions: Sequence[str], tables: Sequence[Table]) -> list[Selection]:
        from hyperrag.llm.tasks.causal_path_selection import CausalPathSelection

        task = CausalPathSelection(self.variant)
        todo = [i for i, t in enumerate(tables) if t.nodes]
        out = [Selection() for _ in tables]
        if not todo:
            return out
        inputs = []
        for i in todo:
            inp: dict[str, Any] = {"query": questions[i], "candidates": tables[i].candidates()}
            if self.max_selected:
                inp["max_selected"] = self.max_selected
            inputs.append(inp)
        results = self.llm.complete_structured_batch(task, inputs, progress="path selection" if self.progress else False)
        for i, res in zip(todo, results):
            sel = out[i]
            sel.invalid_ids = int(res.dropped_ids or 0)
            if not res.ok:
                sel.error = str(res.error_kind or "failed")
                continue
            sel.ok = True
            if self.variant == "standard":
                sel.kept = [int(k) for k in res.value]
            else:
                sel.kept = [int(k) for k in res.value["kept"]]
                sel.spurious = [int(k) for k in res.value["spurious"]]
        return out

    def answer(self, questions: Sequence[str], evidence: Sequence[Sequence[tuple[Any, str]]]) -> list[dict[str, Any]]:
        """``grounded_answer`` per question from its ``(key, text)`` evidence (kept items only).

        Returns per question ``{"answer", "supporting" (caller keys), "answer_ok"}``.
        """
        todo = [i for i, ev in enumerate(evidence) if ev]
        out: list[dict[str, Any]] = [{"answer": "", "supporting": [], "answer_ok": False} for _ in evidence]
        if not todo:
            return out
        inputs = [{"question": questions[i], "passages": list(evidence[i])} for i in todo]
        results = self.llm.complete_structured_batch("grounded_answer", inputs,
                                                     progress="answers" if self.progress else False)
        for i, res in zip(todo, results):
            if res.ok:
                out[i] = {"answer": res.value["answer"], "supporting": list(res.value["supporting"]),
                          "answer_ok": True}
            else:
                out[i]["answer_error"] = str(res.error_kind or "failed")
        return out
