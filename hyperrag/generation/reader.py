"""QA reader: answer each query from its top retrieved passages with the LLM (``grounded_answer`` task).

A retriever that generates its own answer (CDF-RAG, HugRAG, ...) puts it in its row details as
``"answer"`` (optionally ``"supporting_ids"``); :func:`answer_rows` uses that and calls the reader
only for the other rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperrag.data.types import Corpus

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


def answer_queries(llm: LanguageModel, questions: Sequence[str], ranked_ids: Sequence[Sequence[str]],
                   corpus: Corpus, top_n: int = 5, progress: bool | str = "answers",
                   options: Sequence[Sequence[str]] | None = None, style: str = "short",
                   prompt: str = "grounded") -> list[dict[str, Any]]:
    """Per query ``{"answer": str, "supporting_ids": [passage id], "answer_ok": bool, "answer_error": str?}``,
    plus ``"answer_option": int`` for a multiple-choice query and ``"short_answer": str`` (the bare answer EM and
    F1 score) with ``style="explanatory"``.

    Args:
        llm: an available :class:`hyperrag.llm.LLM`.
        questions: B questions.
        ranked_ids: per query, passage ids best first; the first ``top_n`` are shown to the model.
        corpus: where the passage texts come from.
        options: per query, its answer options (empty for a free-form question); the answer is one of them.
        style: the run's ``answer_style``: ``short`` or ``explanatory`` (an explanation plus the short answer).
        prompt: ``grounded`` (our reader: passages with IDs, cited support) or ``hipporag2`` (HippoRAG 2's reader
            structure, :mod:`hyperrag.llm.tasks.hipporag_qa`; multiple-choice questions keep ``grounded``).
    """
    from hyperrag.llm.tasks.grounded_answer import GroundedAnswer
    from hyperrag.llm.tasks.hipporag_qa import HippoRAGQA

    inputs = [{"question": q, "passages": [(pid, corpus[corpus.position(pid)].content) for pid in ids[:top_n]]}
              for q, ids in zip(questions, ranked_ids)]
    for x, opts in zip(inputs, options or ()):
        if opts:  # only multiple-choice inputs carry the key: free-form prompts (and their cache) are unchanged
            x["options"] = list(opts)
    if prompt not in READER_PROMPTS:
        raise ValueError(f"reader prompt must be one of {READER_PROMPTS}, got {prompt!r}")
    results: list[Any] = [None] * len(inputs)
    reference: list[int] = []
    grounded: list[int] = []
    for i, x in enumerate(inputs):  # HippoRAG 2's reader for free-form questions, the grounded one for options
        (reference if prompt == "hipporag2" and "options" not in x else grounded).append(i)
    for task, idx in ((HippoRAGQA(style), reference), (GroundedAnswer(style), grounded)):  # type: ignore[arg-type]
        if idx:
            for i, res in zip(idx, llm.complete_structured_batch(task, [inputs[i] for i in idx], progress=progress)):
                results[i] = res
    out = []
    for res in results:
        if res.ok:
            out.append({"answer": res.value["answer"], "supporting_ids": list(res.value["supporting"]),
                        "answer_ok": True})
            if "option" in res.value:
                out[-1]["answer_option"] = res.value["option"]
            for key in ("short_answer", "explanation"):
                if key in res.value:
                    out[-1][key] = res.value[key]
        else:  # recorded, not raised: the retrieval result stays usable
            out.append({"answer": "", "supporting_ids": [], "answer_ok": False,
                        "answer_error": str(getattr(res, "error_kind", "failed"))})
    return out


READER_PROMPTS = ("grounded", "hipporag2")


def resolve_reader_prompt(choice: str, method_default: str | None) -> str:
    """The run's ``reader_prompt``; ``auto`` takes the method's own (HippoRAG 2 and CatRAG: ``hipporag2``), else
    ``grounded``."""
    return str(method_default or "grounded") if choice == "auto" else choice


def reader_prompt(cfg: Any) -> str:
    """A run config's reader prompt: its ``reader_prompt`` resolved against ``method.reader_prompt``."""
    return resolve_reader_prompt(str(cfg.get("reader_prompt", "auto")), cfg.method.get("reader_prompt"))


def retriever_answer(row: dict[str, Any]) -> dict[str, Any] | None:
    """The answer a retriever generated itself (``details["answer"]``), in the reader's record shape."""
    details = row.get("details")
    if not isinstance(details, dict) or not isinstance(details.get("answer"), str):
        return None
    support: Any = None
    for source in (details, details.get("generation")):
        if isinstance(source, dict):
            support = next((source[k] for k in ("supporting_ids", "supporting") if isinstance(source.get(k), list)),
                           None)
            if support is not None:
                break
    answer = details["answer"]
    out = {"answer": answer, "supporting_ids": [s for s in support or [] if isinstance(s, str)],
           "answer_ok": bool(answer.strip()), "answer_source": "retriever"}
    if isinstance(details.get("short_answer"), str):  # an explanatory answer's bare answer (EM / F1 score it)
        out["short_answer"] = details["short_answer"]
    return out


def answer_rows(llm: LanguageModel, rows: list[dict[str, Any]], corpus: Corpus, top_n: int = 5,
                progress: bool | str = False, style: str = "short", prompt: str = "grounded") -> int:
    """Add ``answer``/``supporting_ids``/``answer_ok`` to prediction rows in place; return LLM-answered rows.

    Rows whose retriever already answered keep that answer; the rest go to the reader when ``llm`` is
    available and ``top_n > 0``, with the row's ``options`` (multiple choice) when it has them. An exception from the LLM layer marks the batch failed, never raises.
    """
    todo = []
    for row in rows:
        own = retriever_answer(row)
        if own is not None:
            row.update(own)
        else:
            todo.append(row)
    if not todo or not top_n or not getattr(llm, "available", False):
        return 0
    try:
        answers = answer_queries(llm, [r["question"] for r in todo], [r["ranked_ids"] for r in todo], corpus,
                                 top_n=top_n, progress=progress, options=[r.get("options") or [] for r in todo],
                                 style=style, prompt=prompt)
    except Exception as err:  # noqa: BLE001 - an LLM outage costs answers, not the run
        answers = [{"answer": "", "supporting_ids": [], "answer_ok": False,
                    "answer_error": f"{type(err).__name__}: {err}"[:200]} for _ in todo]
    for row, ans in zip(todo, answers):
        row.update({**ans, "answer_source": "reader"})
    return len(todo)
