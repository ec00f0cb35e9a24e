"""A method's own reader context within a token budget, and the answer it writes from that context.

GraphRAG (local search), LightRAG and RAPTOR each build their own context — community reports, entity and
relation rows, text units, tree nodes — fill it up to a token budget and answer from it, instead of handing
the top-k passages to the generic QA reader. This is that shared step:

* :func:`take_within` — how many leading items of a ranked list fit a budget (the packers of all three stop
  at the first item that does not fit);
* :class:`ContextItem` — one row of such a context; a row that *is* a passage carries its passage id, which
  the answer cites and which tells a gold-informed oracle exactly which passage was shown;
* :func:`answer_from_context` — the ``grounded_answer`` task over each query's rows (the same task, cache and
  oracle as the QA reader), read back in the shape :func:`hyperrag.generation.reader.retriever_answer` expects
  in ``details``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hyperrag.hierarchy.tokens import approx_tokens

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


def take_within(texts: Sequence[str], budget: int, counter: Callable[[str], int] = approx_tokens) -> int:
    """The number of leading ``texts`` whose token counts add up to at most ``budget``.

    Stops at the first text that does not fit (it is not skipped for a shorter one further down): every
    packer this serves keeps its items in rank order.
    """
    used = 0
    for n, text in enumerate(texts):
        used += counter(text)
        if used > budget:
            return n
    return len(texts)


@dataclass(frozen=True)
class ContextItem:
    """One row of a method's context.

    Attributes:
        key: the caller's key for the row (``report:12``, ``entity:3``, ``passage:p07`` ...).
        text: what the reader sees, its kind first (``Report: ...``, ``Relationship: ...``).
        passage_id: the corpus id when the row is a passage's own text (``None`` for derived rows: reports,
            entities, relations, summaries — they are attributed to no single passage).
    """

    key: str
    text: str
    passage_id: str | None = None

    def task_input(self) -> dict[str, Any]:
        """The row as a ``grounded_answer`` passage (provenance for passage rows only)."""
        row: dict[str, Any] = {"id": self.key, "text": self.text}
        if self.passage_id is not None:
            row["passage_ids"] = [self.passage_id]
        return row


def answer_from_context(llm: LanguageModel, questions: Sequence[str], contexts: Sequence[Sequence[ContextItem]],
                        progress: bool | str = False) -> list[dict[str, Any]]:
    """Answer each question from its own context rows with the ``grounded_answer`` task.

    Args:
        llm: an available LLM.
        questions: B questions.
        contexts: B lists of rows, in the order the method ranked them.

    Returns:
        B dicts ``{"answer", "answer_ok", "supporting_ids", "supporting_rows"}`` (``supporting_ids``: passage ids
        of the cited passage rows; ``supporting_rows``: every cited row key), plus ``answer_error`` when the call
        failed (then ``answer`` is empty: the batch runner counts it as a skipped answer).
    """
    inputs = [{"question": q, "passages": [it.task_input() for it in rows]} for q, rows in zip(questions, contexts)]
    results = llm.complete_structured_batch("grounded_answer", inputs, progress=progress)
    out = []
    for res, rows in zip(results, contexts):
        if not res.ok:
            out.append({"answer": "", "answer_ok": False, "supporting_ids": [], "supporting_rows": [],
                        "answer_error": str(res.error_kind or "failed")})
            continue
        by_key = {it.key: it for it in rows}
        cited = [str(k) for k in res.value["supporting"]]
        passages = [by_key[k].passage_id for k in cited if k in by_key and by_key[k].passage_id is not None]
        out.append({"answer": res.value["answer"], "answer_ok": True, "supporting_ids": passages,
                    "supporting_rows": cited})
    return out
