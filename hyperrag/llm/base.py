"""The ``LLM`` interface every backend exposes (Hydra group ``llm/``).

An :class:`LLM` is an OpenAI-compatible endpoint plus a response cache, accounting and the task
machinery. Backends differ only in how the endpoint comes to exist (a llama.cpp subprocess, a vLLM
subprocess, a remote URL) and in their declared constrained-decoding capability.

Sync use (retrievers, scripts)::

    with instantiate(cfg.llm) as llm:                     # starts the server if it manages one
        res = llm.complete_structured("fact_filter", {"query": q, "facts": facts})
        kept = res.value if res.ok else fallback           # caller keys of the relevant facts
        many = llm.complete_structured_batch(FactFilter(), [{"query": q, "facts": f} for q, f in ...])

Async use: ``async with llm.session() as s: await s.complete(task, inputs)``; from sync code,
``llm.run(lambda s: workflow(s))`` runs an async workflow in its own event loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from typing_extensions import Self

from hyperrag.errors import InputError
from hyperrag.llm.accounting import Accounting, Estimate, approx_tokens
from hyperrag.llm.cache import ResponseCache
from hyperrag.llm.client import ChatClient, ClientConfig, _shared_tls_context, run_sync
from hyperrag.llm.errors import EndpointUnreachableError, LLMUnavailableError
from hyperrag.llm.session import Sampling, Session, prepare
from hyperrag.llm.structured import STRUCTURED_MODES
from hyperrag.llm.tasks import Task, get_task
from hyperrag.llm.types import TaskResult

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_CACHE = ".cache/hyperrag/llm_cache.sqlite"


def _plain(value: Any) -> Any:
    """OmegaConf containers → plain Python (Hydra passes DictConfig unless ``_convert_`` says otherwise)."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(value, (DictConfig, ListConfig)):
            return OmegaConf.to_container(value, resolve=True)
    except ImportError:  # pragma: no cover - omegaconf is a core dependency
        pass
    return value


class LLM:
    """An OpenAI-compatible chat endpoint with cache, accounting and structured tasks.

    Args:
        model: the model name sent in requests (``None``: the first one ``/v1/models`` lists).
        base_url: endpoint including ``/v1``; managed backends fill it in when they start.
        api_key: bearer token, if the endpoint needs one.
        structured_output: the server's constrained-decoding capability (see
            :mod:`hyperrag.llm.structured`); chosen by config, never inferred from the model name.
        client: :class:`ClientConfig` fields (concurrency, timeouts, retries, backoff): the ``client`` node of the
            backend's YAML, or :func:`~hyperrag.llm.client.client_settings` by hand; ``None`` only for a backend
            that sends no request (``none``, the oracle).
        sampling: :class:`Sampling` fields (temperature, top_p, max_tokens, seed).
        cache_path: sqlite response cache; ``None`` disables caching.
        max_invalid_retries: extra rounds after a reply that fails parsing/validation.
        show_usage: print the accounting table when the context manager exits.
    """

    available = True
    kind = "openai_compatible"
    #: what the backend does in a run (``llm``: the method's decisions; ``reader``: the QA reader)
    role = "llm"
    #: talks HTTP to an endpoint, so it needs its ``client`` settings (``none`` and the oracle send nothing)
    sends_requests = True

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        structured_output: str = "json_schema",
        client: ClientConfig | Mapping[str, Any] | None = None,
        sampling: Sampling | Mapping[str, Any] | None = None,
        cache_path: str | Path | None = DEFAULT_CACHE,
        max_invalid_retries: int = 2,
        show_usage: bool = True,
    ) -> None:
        if structured_output not in STRUCTURED_MODES:
            raise ValueError(f"llm.structured_output={structured_output!r}; expected one of {STRUCTURED_MODES}")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.structured_output = structured_output
        if client is None and self.sends_requests:  # at construction: one line before any work, exit 2
            raise InputError("missing: an HTTP backend needs its client settings (the backend YAML's client node; "
                             "by hand hyperrag.llm.client_settings())", setting="llm.client")
        self.client_config: ClientConfig | None = None if client is None else ClientConfig.from_any(_plain(client))
        self.sampling = Sampling.from_any(_plain(sampling))
        self.cache_path = str(cache_path) if cache_path else None
        self.max_invalid_retries = int(max_invalid_retries)
        self.show_usage = show_usage
        self.accounting = Accounting()
        self._cache: ResponseCache | None = None
        self._started = False
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- lifecycle
    def _launch(self) -> None:
        """Bring the endpoint up (managed backends start their server here)."""

    def _shutdown(self) -> None:
        """Stop what :meth:`_launch` started."""

    def start(self) -> LLM:
        with self._lock:
            if self._started:
                return self
            self._launch()
            if not self.base_url:
                raise LLMUnavailableError(f"{type(self).__name__}: no base_url configured")
            try:
                models = self.probe()  # before any work: a dead endpoint is one line, not a failed stage
            except EndpointUnreachableError:
                self._shutdown()
                raise
            if self.model is None:
                if not models:
                    raise LLMUnavailableError(f"{self.base_url}/models lists no model; set llm.model")
                self.model = models[0]
            self._started = True
        log.info("LLM %s ready: model=%s at %s", self.kind, self.model, self.base_url)
        return self

    def stop(self) -> None:
        with self._lock:
            if self._started:
                self._shutdown()
                self._started = False
            if self._cache is not None:
                self._cache.close()
                self._cache = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        try:
            if self.show_usage and self.accounting.tasks:
                self.accounting.log_summary()
                label = getattr(self, "label", None) or self.kind
                self.accounting.print(title=f"LLM usage ({self.role}: {label})")
        finally:
            self.stop()

    def probe(self) -> list[str]:
        """The model names ``GET <base_url>/models`` lists: one request, no retries.

        Raises:
            EndpointUnreachableError: no connection, a timeout, an HTTP error status or a reply that is not a
                model list — one line naming the URL and the error.
        """
        import httpx

        url = f"{(self.base_url or '').rstrip('/')}/models"
        cfg = self.transport()
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            tls = _shared_tls_context() if url.startswith("https") else False
            resp = httpx.get(url, headers=headers, verify=tls,
                             timeout=httpx.Timeout(min(cfg.timeout_s, 30.0), connect=cfg.connect_timeout_s))
            resp.raise_for_status()
            return [m["id"] for m in resp.json().get("data", [])]
        except httpx.HTTPStatusError as err:
            why = f"it answered HTTP {err.response.status_code} {err.response.reason_phrase}"
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as err:
            why = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            why = f"the reply is not an OpenAI model list ({type(err).__name__})"
        raise EndpointUnreachableError(f"cannot use the LLM endpoint {url}: {why}", field="llm.base_url")

    @property
    def cache(self) -> ResponseCache | None:
        if self._cache is None and self.cache_path:
            self._cache = ResponseCache(self.cache_path)
        return self._cache

    # ---------------------------------------------------------------- calls
    @asynccontextmanager
    async def session(self):  # type: ignore[no-untyped-def]
        """Async context: a :class:`Session` bound to the running event loop."""
        self.start()
        client = ChatClient(self.base_url or "", self.model or "", api_key=self.api_key, config=self.transport())
        async with Session(client, mode=self.structured_output, sampling=self.sampling, cache=self.cache,
                           accounting=self.accounting, max_invalid_retries=self.max_invalid_retries) as s:
            yield s

    def run(self, workflow: Callable[[Session], Awaitable[T]]) -> T:
        """Run ``await workflow(session)`` from sync code (own event loop)."""

        async def go() -> T:
            async with self.session() as s:
                return await workflow(s)

        return run_sync(go)

    def complete_structured(self, task: Task | str, inputs: Mapping[str, Any]) -> TaskResult:
        """One task call from sync code."""
        t = get_task(task)
        return self.run(lambda s: s.complete(t, inputs))

    def complete_structured_batch(
        self, task: Task | str, inputs_list: Sequence[Mapping[str, Any]], *, progress: bool | str = False
    ) -> list[TaskResult]:
        """Many calls of one task from sync code, concurrently; results in input order."""
        t = get_task(task)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(inputs_list), desc=progress if isinstance(progress, str) else t.label,
                       unit="call", leave=False)

        def tick(_i: int, _r: TaskResult) -> None:
            if bar is not None:
                bar.update(1)

        try:
            return self.run(lambda s: s.complete_many(t, inputs_list, on_result=tick))
        finally:
            if bar is not None:
                bar.close()

    async def acomplete_structured(self, task: Task | str, inputs: Mapping[str, Any]) -> TaskResult:
        async with self.session() as s:
            return await s.complete(get_task(task), inputs)

    def estimate(self, task: Task | str, inputs_list: Sequence[Mapping[str, Any]]) -> Estimate:
        """Dry run: requests and approximate tokens a batch would need (cache hits excluded)."""
        t = get_task(task)
        model = self.model or "?"
        cached = prompt = 0
        for inputs in inputs_list:
            p = prepare(t, inputs, model=model, mode=self.structured_output, sampling=self.sampling)
            if self.cache is not None and self.model is not None and self.cache.contains(p.key):
                cached += 1
                continue
            prompt += sum(approx_tokens(m["content"]) + 4 for m in p.messages)
        todo = len(inputs_list) - cached
        return Estimate(t.label, len(inputs_list), cached, todo, prompt, todo * (self.sampling.max_tokens or t.max_tokens))

    def transport(self) -> ClientConfig:
        """The client settings requests are sent with."""
        if self.client_config is None:
            raise InputError(f"{type(self).__name__} sends no requests: it has no client settings", setting="llm.client")
        return self.client_config

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "base_url": self.base_url,
                "structured_output": self.structured_output, "cache_path": self.cache_path,
                "concurrency": self.client_config.concurrency if self.client_config is not None else None}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"


class NoLLM(LLM):
    """``llm=none``: no model at all. ``available`` is False; any task call raises
    :class:`LLMUnavailableError` so callers take their documented non-LLM stand-in instead."""

    available = False
    kind = "none"
    sends_requests = False

    def __init__(self, **_: Any) -> None:
        super().__init__(cache_path=None, show_usage=False)

    def start(self) -> LLM:
        return self

    def stop(self) -> None:
        return None

    def _unavailable(self, what: str) -> LLMUnavailableError:
        return LLMUnavailableError(
            f"{what} needs an LLM but llm=none is configured; use the LLM-free stand-in "
            "(check `llm.available` first) or run with llm=local / llm=vllm / llm=openai_compatible"
        )

    @asynccontextmanager
    async def session(self):  # type: ignore[no-untyped-def]
        raise self._unavailable("an LLM session")
        yield  # pragma: no cover

    def run(self, workflow: Callable[[Session], Awaitable[T]]) -> T:
        raise self._unavailable("this step")

    def complete_structured(self, task: Task | str, inputs: Mapping[str, Any]) -> TaskResult:
        raise self._unavailable(f"task {get_task(task).label}")

    def complete_structured_batch(self, task: Task | str, inputs_list: Sequence[Mapping[str, Any]], *,
                                  progress: bool | str = False) -> list[TaskResult]:
        raise self._unavailable(f"task {get_task(task).label}")

    def estimate(self, task: Task | str, inputs_list: Sequence[Mapping[str, Any]]) -> Estimate:
        raise self._unavailable(f"task {get_task(task).label}")
