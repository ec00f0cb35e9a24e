"""The two services every method is handed, as structural types: a text encoder and a language model.

:class:`~hyperrag.embedding.TextEncoder` and every :class:`~hyperrag.llm.base.LLM` backend (``NoLLM``
included) satisfy them; a test double only needs what a protocol lists. Signatures across ``hyperrag`` say
``encoder: Encoder`` and ``llm: LanguageModel | None`` instead of ``Any``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    import torch

    from hyperrag.llm.accounting import Accounting, Estimate
    from hyperrag.llm.session import Session
    from hyperrag.llm.tasks import Task
    from hyperrag.llm.types import TaskResult

T = TypeVar("T")


@runtime_checkable
class Encoder(Protocol):
    """A sentence embedder with an identity (what cached embeddings are keyed by)."""

    #: names the model and its settings; embeddings from different keys are never mixed
    model_key: str
    #: the model as the user named it (recorded in index manifests)
    model_name: str

    def encode(self, texts: Sequence[str], desc: str = "encode") -> torch.Tensor:
        """N texts → FloatTensor [N, D] on the CPU (unit-norm rows for cosine scoring)."""
        ...

    @property
    def dim(self) -> int:
        """D, the embedding dimension."""
        ...


@runtime_checkable
class LanguageModel(Protocol):
    """The framework's LLM: structured tasks over an OpenAI-compatible endpoint, cached and accounted.

    ``available`` is False for ``llm=none`` (:class:`~hyperrag.llm.base.NoLLM`): callers check it and take
    their LLM-free stand-in; any call then raises :class:`~hyperrag.llm.errors.LLMUnavailableError`.
    """

    available: bool
    #: the backend (``openai_compatible``, ``llama_cpp``, ``vllm``, ``none``, ...)
    kind: str
    #: the model name sent in requests (``None`` until a managed server has started)
    model: str | None
    accounting: Accounting

    def complete_structured(self, task: Task | str, inputs: Mapping[str, Any]) -> TaskResult:
        """One task call."""
        ...

    def complete_structured_batch(self, task: Task | str, inputs_list: Sequence[Mapping[str, Any]], *,
                                  progress: bool | str = False) -> list[TaskResult]:
        """Many calls of one task, concurrently; results in input order."""
        ...

    def run(self, workflow: Callable[[Session], Awaitable[T]]) -> T:
        """``await workflow(session)`` from sync code."""
        ...

    def estimate(self, task: Task | str, inputs_list: Sequence[Mapping[str, Any]]) -> Estimate:
        """Requests and approximate tokens a batch would need (cache hits excluded)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Backend, model and endpoint, for run records."""
        ...


__all__ = ["Encoder", "LanguageModel"]
