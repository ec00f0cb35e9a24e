"""LLM-judged answer accuracy (HyperRAG's "GPT-Acc"): the ``answer_judge`` task per answered query.

Complements string matching (EM, Match-Acc): a response that gives the reference answer in other words counts.
An abstention or empty response is wrong without asking; a failed judge call gives ``None`` (left out of the
mean, counted by the LLM's usage table).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hyperrag.eval.text import is_abstention

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


def llm_judge_accuracy(llm: LanguageModel, questions: Sequence[str], predictions: Sequence[str | None],
                       golds: Sequence[Sequence[str]], progress: bool | str = False) -> list[float | None]:
    """Per query 1.0 / 0.0 (the judge's verdict), 0.0 for an abstention, ``None`` without gold answers or
    when the judge failed."""
    out: list[float | None] = [None] * len(questions)
    todo = []
    for i, (p, g) in enumerate(zip(predictions, golds)):
        if not g:
            continue
        if is_abstention(p):
            out[i] = 0.0
        else:
            todo.append(i)
    if not todo:
        return out
    inputs = [{"question": questions[i], "references": list(golds[i]), "response": str(predictions[i])}
              for i in todo]
    results = llm.complete_structured_batch("answer_judge", inputs, progress=progress and "judging answers")
    for i, res in zip(todo, results):
        if res.ok:
            out[i] = 1.0 if res.value else 0.0
    return out
