"""The stop of an offline LLM stage (OpenIE, module summaries, causal gates, RAPTOR cluster summaries, HyperRAG's
query graphs, CDF-RAG's causal pair verification) whose every call failed: one line, exit code 2
(:class:`~hyperrag.llm.errors.StageFailedError`), instead of building on nothing.

Kept apart from :mod:`hyperrag.llm.errors`, which the client and session import: this check names the backend
(:class:`~hyperrag.protocols.LanguageModel`), whose protocol in turn names the session's types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hyperrag.llm.errors import StageFailedError

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


def stop_if_nothing_succeeded(stage: str, *, failed: int, succeeded: int, first_error: str | None,
                              llm: LanguageModel | None, unit: str = "items") -> None:
    """Raise :class:`StageFailedError` when ``stage`` asked the LLM for ``failed`` > 0 items and has nothing
    usable.

    Args:
        stage: what the calls were for, as the user knows it ("OpenIE", "module summaries"...).
        failed: items whose LLM call failed in this run.
        succeeded: items the stage has a result for, from this run or from its checkpoint / cache (a stage
            that resumed with results and failed only on its rest is not stopped: its failures are retried by
            the next run).
        first_error: one failure's message, shown to say why.
        llm: the backend (its ``base_url`` and ``model`` go into the message).
        unit: what an item is ("passages", "modules", "pairs").
    """
    if failed <= 0 or succeeded > 0:
        return
    if getattr(llm, "fails_by_design", False):  # llm=oracle: a task without gold fails, the fallback runs, counted
        return
    why = (first_error or "no reason recorded").splitlines()[0][:200]
    raise StageFailedError(
        f"{stage}: every LLM call failed ({failed} {unit}; first error: {why}) — stopping instead of "
        f"building on nothing; check the endpoint {getattr(llm, 'base_url', None)} and model "
        f"{getattr(llm, 'model', None)!r}, then rerun (finished calls are cached)", field="llm")


__all__ = ["stop_if_nothing_succeeded"]
