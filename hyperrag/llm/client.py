"""Async OpenAI-compatible chat-completions client: the only way the project talks to a model.

* many requests in flight, bounded by a pool of ``concurrency`` slots (so vLLM can batch them);
  connections are spread over several small ``httpx.AsyncClient`` pools of
  :data:`CONNECTIONS_PER_POOL` each, because httpcore's pool bookkeeping grows quadratically with
  the number of connections in one pool;
* per-request timeouts; retries with exponential backoff and jitter (tenacity) on timeouts,
  connection errors, HTTP 429 and 5xx — never on other 4xx;
* every request ends as a :class:`~hyperrag.llm.types.ChatResult` record (ok / error kind /
  attempts / latency / tokens) instead of an exception.

Sync code calls :func:`run_batch` (or :func:`run_sync` with any coroutine); it runs its own event
loop, in a helper thread when the caller already runs one (Jupyter).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from typing_extensions import Self

from hyperrag.config.validation import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    settings,
    validate,
)
from hyperrag.llm.types import ChatRequest, ChatResult, ErrorKind

log = logging.getLogger(__name__)

T = TypeVar("T")

CONNECTIONS_PER_POOL = 8


@settings
class ClientConfig:
    """Transport settings: ``client`` of ``hydra_configs/llm/<backend>.yaml`` (and of the embedding endpoint's
    ``embedder/openai_compatible.yaml``), their only source — each backend has its own values. By hand:
    :func:`client_settings`.

    Attributes:
        concurrency: requests in flight at once (vLLM batches them; llama.cpp serves one at a time).
        timeout_s: read timeout of one HTTP attempt (a reply slower than this is retried).
        connect_timeout_s: TCP connect timeout.
        max_retries: extra attempts after the first on a transient failure.
        backoff_initial_s / backoff_max_s: exponential backoff (with jitter) between attempts.
    """

    concurrency: PositiveInt
    timeout_s: PositiveFloat
    connect_timeout_s: PositiveFloat
    max_retries: NonNegativeInt
    backoff_initial_s: NonNegativeFloat
    backoff_max_s: NonNegativeFloat

    @classmethod
    def from_any(cls, value: ClientConfig | Mapping[str, Any], where: str = "llm.client") -> ClientConfig:
        """``value`` as a :class:`ClientConfig` (a mapping is checked: a missing or bad field stops with one line
        naming ``<where>.<field>``)."""
        return value if isinstance(value, cls) else validate(cls, value, where)


def client_settings(backend: str = "openai_compatible", **overrides: Any) -> ClientConfig:
    """The ``client`` settings of ``hydra_configs/llm/<backend>.yaml`` with ``overrides``: the transport of an LLM
    or a client built by hand (tests, benchmarks, notebooks)."""
    from hyperrag.config.compose import configured

    return configured("llm.client", ClientConfig, config_overrides=(f"llm={backend}",), **overrides)


class _Failure(Exception):
    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class _Transient(_Failure):
    """A failure worth another attempt (timeout, connection, 429, 5xx)."""


class _Permanent(_Failure):
    """A failure another attempt will not fix (4xx, malformed protocol)."""


class RequestFailed(Exception):
    """A request that failed for good (after its retries).

    Attributes:
        kind: an :class:`~hyperrag.llm.types.ErrorKind` value; status: the HTTP status, if any; attempts: tries made.
    """

    def __init__(self, kind: str, message: str, status: int | None, attempts: int) -> None:
        super().__init__(message)
        self.kind, self.status, self.attempts = kind, status, attempts


class ChatClient:
    """Async client for ``POST {base_url}/chat/completions``.

    Use as ``async with ChatClient(...) as client: results = await client.chat_many(reqs)``.
    ``base_url`` includes the ``/v1`` suffix, as in the OpenAI SDK.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        config: ClientConfig | Mapping[str, Any],
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.config = ClientConfig.from_any(config)
        self._pools: list[Any] = []
        self._slots: asyncio.LifoQueue[int] | None = None

    async def __aenter__(self) -> Self:
        import httpx

        cfg = self.config
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        n_pools = -(-max(1, cfg.concurrency) // CONNECTIONS_PER_POOL)
        per_pool = -(-max(1, cfg.concurrency) // n_pools)
        tls = _shared_tls_context() if self.base_url.startswith("https") else False
        self._pools = [
            httpx.AsyncClient(
                headers=headers,
                verify=tls,
                timeout=httpx.Timeout(cfg.timeout_s, connect=cfg.connect_timeout_s, pool=None),
                limits=httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool),
            )
            for _ in range(n_pools)
        ]
        # one slot per request in flight, tagged with the pool it uses; LIFO keeps connections warm
        self._slots = asyncio.LifoQueue()
        for i in range(max(1, cfg.concurrency)):
            self._slots.put_nowait(i % n_pools)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for pool in self._pools:
            await pool.aclose()
        self._pools = []

    async def _post_once(self, path: str, body: dict[str, Any]) -> Any:
        """One HTTP attempt of ``POST {base_url}{path}``; the reply's JSON, or a transient / permanent failure."""
        import httpx

        assert self._slots is not None and self._pools, "use ChatClient as an async context manager"
        pool = await self._slots.get()
        try:
            resp = await self._pools[pool].post(f"{self.base_url}{path}", json=body)
        except httpx.TimeoutException as err:
            raise _Transient(ErrorKind.TIMEOUT, f"{type(err).__name__}: {err}") from None
        except (httpx.TransportError, OSError) as err:
            raise _Transient(ErrorKind.CONNECTION, f"{type(err).__name__}: {err}") from None
        finally:
            self._slots.put_nowait(pool)
        status = resp.status_code
        if status == 429:
            raise _Transient(ErrorKind.RATE_LIMIT, f"HTTP 429: {resp.text[:200]}", status)
        if status >= 500:
            raise _Transient(ErrorKind.HTTP_5XX, f"HTTP {status}: {resp.text[:200]}", status)
        if status >= 400:
            raise _Permanent(ErrorKind.HTTP_4XX, f"HTTP {status}: {resp.text[:300]}", status)
        try:
            return resp.json()
        except ValueError as err:
            raise _Permanent(ErrorKind.PROTOCOL, f"not JSON ({err!r}): {resp.text[:200]}", status) from None

    async def _attempt(self, body: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
        data = await self._post_once("/chat/completions", body)
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            usage = data.get("usage") or {}
            return text, usage, choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError) as err:
            raise _Permanent(ErrorKind.PROTOCOL, f"not a chat-completions response ({err!r}): {str(data)[:200]}"
                             ) from None

    async def _with_retries(self, attempt: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        """``await attempt()`` with retries on transient failures; ``(result, attempts)``. Raises
        :class:`RequestFailed` (with the attempts made) when it still fails."""
        from tenacity import (
            AsyncRetrying,
            retry_if_exception_type,
            stop_after_attempt,
            wait_exponential_jitter,
        )

        cfg = self.config
        attempts = 0
        try:
            async for retry in AsyncRetrying(
                stop=stop_after_attempt(cfg.max_retries + 1),
                wait=wait_exponential_jitter(initial=cfg.backoff_initial_s, max=cfg.backoff_max_s),
                retry=retry_if_exception_type(_Transient),
                reraise=True,
            ):
                with retry:
                    attempts += 1
                    result = await attempt()
        except _Failure as err:
            raise RequestFailed(err.kind, str(err), err.status, attempts) from None
        return result, attempts

    async def post_json(self, path: str, body: dict[str, Any]) -> Any:
        """``POST {base_url}{path}`` with ``body`` — bounded concurrency, timeouts and retries as for chat — and
        return the reply's JSON (e.g. ``/embeddings``). Raises :class:`RequestFailed` after the last attempt."""
        data, _ = await self._with_retries(lambda: self._post_once(path, body))
        return data

    async def chat(self, request: ChatRequest) -> ChatResult:
        """Send one request with retries; always returns a record."""
        body = request.body(self.model)
        start = time.perf_counter()
        try:
            (text, usage, finish), attempts = await self._with_retries(lambda: self._attempt(body))
        except RequestFailed as err:
            log.debug("request %s failed after %d attempts: %s", request.tag, err.attempts, err)
            return ChatResult(ok=False, error_kind=err.kind, error=str(err), status=err.status, attempts=err.attempts,
                              latency_s=time.perf_counter() - start, tag=request.tag)
        return ChatResult(
            ok=True,
            text=text,
            attempts=attempts,
            latency_s=time.perf_counter() - start,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=finish,
            tag=request.tag,
        )

    async def chat_many(
        self, requests: Sequence[ChatRequest], on_result: Callable[[int, ChatResult], None] | None = None
    ) -> list[ChatResult]:
        """All requests concurrently (bounded by ``config.concurrency``), results in input order."""

        async def one(i: int, req: ChatRequest) -> ChatResult:
            res = await self.chat(req)
            if on_result is not None:
                on_result(i, res)
            return res

        return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))

    async def list_models(self) -> list[str]:
        assert self._pools, "use ChatClient as an async context manager"
        resp = await self._pools[0].get(f"{self.base_url}/models")
        resp.raise_for_status()
        return [m["id"] for m in resp.json().get("data", [])]


_TLS: Any = None


def _shared_tls_context() -> Any:
    """One verified TLS context for all pools (building one per client costs ~40 ms)."""
    global _TLS
    if _TLS is None:
        import ssl

        import certifi

        _TLS = ssl.create_default_context(cafile=certifi.where())
    return _TLS


def run_sync(make_coro: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from sync code, even when the caller is inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coro())  # type: ignore[arg-type]
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make_coro())  # type: ignore[arg-type]
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = err

    thread = threading.Thread(target=target, name="hyperrag-llm-loop")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_batch(
    requests: Sequence[ChatRequest],
    *,
    base_url: str,
    model: str,
    api_key: str | None = None,
    config: ClientConfig | Mapping[str, Any],
) -> list[ChatResult]:
    """Sync facade: send ``requests`` concurrently and return one :class:`ChatResult` per request."""

    async def go() -> list[ChatResult]:
        async with ChatClient(base_url, model, api_key=api_key, config=config) as client:
            return await client.chat_many(requests)

    return run_sync(go)
