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

from typing import Any

from hyperrag.llm.errors import (
    LLMError,
    LLMUnavailableError,
    OutputInvalid,
    ServerStartError,
    TaskFailedError,
)
from hyperrag.llm.types import ChatRequest, ChatResult, ErrorKind, TaskResult
from hyperrag.utils.lazy import lazy_exports

_LAZY = {
    "LLM": "hyperrag.llm.base",
    "NoLLM": "hyperrag.llm.base",
    "LocalLlamaCppServer": "hyperrag.llm.backends",
    "VLLMServer": "hyperrag.llm.backends",
    "OpenAICompatible": "hyperrag.llm.backends",
    "ChatClient": "hyperrag.llm.client",
    "ClientConfig": "hyperrag.llm.client",
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


def build_llm(cfg: Any = None) -> Any:
    """An :class:`LLM` from a Hydra/OmegaConf node (``_target_`` + arguments), a plain dict, an
    existing LLM (returned as is) or ``None``/``"none"`` (→ :class:`NoLLM`). The server is not
    started: use the result as a context manager, or it starts on first use."""
    from hyperrag.llm.base import LLM, NoLLM

    if cfg is None or cfg == "none":
        return NoLLM()
    if isinstance(cfg, LLM):
        return cfg
    from hydra.utils import instantiate

    return instantiate(cfg, _convert_="all")


__all__ = [  # noqa: PLE0604 - the lazy names are strings too
    "ChatRequest", "ChatResult", "ErrorKind", "LLMError", "LLMUnavailableError", "OutputInvalid",
    "ServerStartError", "TaskFailedError", "TaskResult", "build_llm", *_LAZY,
]
