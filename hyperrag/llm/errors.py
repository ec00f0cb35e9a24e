"""Exceptions of the LLM layer (raised only for misuse; failed requests become records).

Two of them stop a run with one line and exit code 2 (they subclass :class:`~hyperrag.errors.InputError`,
which the entry points print that way): :class:`EndpointUnreachableError`, raised by
:meth:`~hyperrag.llm.base.LLM.start` before any work when the configured endpoint does not answer, and
:class:`StageFailedError`, raised by :func:`stop_if_nothing_succeeded` when every LLM call of an offline stage
failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hyperrag.errors import InputError

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


class LLMError(RuntimeError):
    """Base class for LLM-layer errors."""


class LLMUnavailableError(LLMError):
    """A task needs a model but the configured backend is ``llm=none`` (or not started)."""


class ServerStartError(LLMError):
    """A managed model server (llama.cpp, vLLM) did not become healthy."""


class TaskFailedError(LLMError):
    """Raised by :meth:`TaskResult.unwrap` when the call has no valid output."""


class OutputInvalid(ValueError):
    """A model reply that does not parse or validate against the task's schema."""


class EndpointUnreachableError(InputError):
    """The LLM endpoint does not answer ``GET <base_url>/models`` (wrong URL, server not started, bad key)."""


class StageFailedError(InputError):
    """Every LLM call of an offline stage (OpenIE, module summaries — GraphRAG's community reports among them —,
    causal gates, RAPTOR cluster summaries, HyperRAG's query graphs, CDF-RAG's causal pair verification)
    failed: nothing to build on."""


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
