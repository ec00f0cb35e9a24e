"""Exceptions of the LLM layer (raised only for misuse; failed requests become records).

Two of them stop a run with one line and exit code 2 (they subclass :class:`~hyperrag.errors.InputError`,
which the entry points print that way): :class:`EndpointUnreachableError`, raised by
:meth:`~hyperrag.llm.base.LLM.start` before any work when the configured endpoint does not answer, and
:class:`StageFailedError`, raised by :func:`~hyperrag.llm.stages.stop_if_nothing_succeeded` when every LLM call
of an offline stage failed.
"""

from __future__ import annotations

from hyperrag.errors import InputError


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
