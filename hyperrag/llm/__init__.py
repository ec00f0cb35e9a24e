"""The LLM layer: one OpenAI-compatible client, backends, cache/accounting, tasks and OpenIE.

Entry points::

    from hyperrag.llm import build_llm, run_openie
    llm = build_llm(cfg.llm)              # Hydra node with _target_, or None → NoLLM
    with llm:                             # starts/stops a managed server (llama.cpp, vLLM)
        if llm.available:
            res = llm.complete_structured("fact_filter", {"query": q, "facts": triples})
            keep = res.value if res.ok else None   # caller keys of relevant facts
        report = run_openie(corpus.passages, llm, output_path="openie.json")

Heavy packages (httpx, tenacity, json-repair, llama_cpp, vllm) are imported only when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hyperrag.llm.errors import (
    LLMError,
    LLMUnavailableError,
    OutputInvalid,
    ServerStartError,
    TaskFailedError,
)
from hyperrag.llm.types import ChatRequest, ChatResult, ErrorKind, TaskResult
from hyperrag.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

_LAZY = {
    "LLM": "hyperrag.llm.base",
    "NoLLM": "hyperrag.llm.base",
    "LocalLlamaCppServer": "hyperrag.llm.backends",
    "VLLMServer": "hyperrag.llm.backends",
    "OpenAICompatible": "hyperrag.llm.backends",
    "OracleLLM": "hyperrag.llm.oracle",
    "ChatClient": "hyperrag.llm.client",
    "ClientConfig": "hyperrag.llm.client",
    "client_settings": "hyperrag.llm.client",
    "run_batch": "hyperrag.llm.client",
    "run_sync": "hyperrag.llm.client",
    "ResponseCache": "hyperrag.llm.cache",
    "Accounting": "hyperrag.llm.accounting",
    "Estimate": "hyperrag.llm.accounting",
    "Sampling": "hyperrag.llm.session",
    "Session": "hyperrag.llm.session",
    "IdChecker": "hyperrag.llm.structured",
    "get_task": "hyperrag.llm.tasks",
    "task_names": "hyperrag.llm.tasks",
    "Task": "hyperrag.llm.tasks",
    "run_openie": "hyperrag.llm.openie",
    "OpenIEIndexer": "hyperrag.llm.openie",
    "OpenIEReport": "hyperrag.llm.openie",
    "index_corpus": "hyperrag.llm.openie",
    "estimate_openie": "hyperrag.llm.openie",
    "filter_facts": "hyperrag.llm.recognition",
}


__getattr__ = lazy_exports(__name__, _LAZY)


def build_llm(cfg: Any = None, dataset: Any = None) -> Any:
    """An :class:`LLM` from a Hydra/OmegaConf node (``_target_`` + arguments), a plain dict, an
    existing LLM (returned as is) or ``None``/``"none"`` (→ :class:`NoLLM`). The server is not
    started: use the result as a context manager, or it starts on first use.

    ``dataset``: the query file in use; a backend that answers from gold annotations (``llm=oracle``) is bound
    to it, and refuses to start without one.
    """
    from hyperrag.llm.base import LLM, NoLLM

    if cfg is None or cfg == "none":
        return NoLLM()
    if isinstance(cfg, LLM):
        llm = cfg
    else:
        from hydra.utils import instantiate

        llm = instantiate(cfg, _convert_="all")
    if getattr(llm, "requires_gold", False) and dataset is not None:
        llm.bind_gold(dataset)
    return llm


def llm_label(llm: LanguageModel | None) -> str:
    """How figures made with ``llm`` are labelled: ``LLM-free``, ``upper bound (oracle)`` or the model."""
    if llm is None or not getattr(llm, "available", False):
        return "LLM-free"
    return getattr(llm, "label", None) or f"{getattr(llm, 'kind', 'llm')}:{getattr(llm, 'model', '?')}"


__all__ = [  # noqa: PLE0604 - the lazy names are strings too
    "ChatRequest", "ChatResult", "ErrorKind", "LLMError", "LLMUnavailableError", "OutputInvalid",
    "ServerStartError", "TaskFailedError", "TaskResult", "build_llm", "llm_label", *_LAZY,
]
