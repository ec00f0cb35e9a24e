"""Exceptions of the LLM layer (raised only for misuse; failed requests become records)."""

from __future__ import annotations


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
