"""Plain records of the LLM layer: one chat request, one transport result, one task result.

Nothing here raises on a failed request: every call ends as a record with ``ok`` and, when it
failed, an ``error_kind`` from :class:`ErrorKind`, so a batch of thousands never crashes on one bad
reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel


class ErrorKind:
    """Why a request or task failed (string constants, stable in logs and JSON)."""

    TIMEOUT = "timeout"  # read/connect/pool timeout, after all retries
    HTTP_5XX = "http_5xx"  # server error (500-599), after all retries
    RATE_LIMIT = "rate_limit"  # HTTP 429, after all retries
    HTTP_4XX = "http_4xx"  # client error: bad request, auth, unknown model (not retried)
    CONNECTION = "connection"  # refused/reset connection, after all retries
    PROTOCOL = "protocol"  # the HTTP body is not an OpenAI chat-completions response
    INVALID_OUTPUT = "invalid_output"  # the model's text never parsed/validated against the schema
    UNAVAILABLE = "unavailable"  # no model configured (llm=none)
    NO_GOLD = "no_gold"  # llm=oracle: no gold annotation answers this task or question

    TRANSPORT = (TIMEOUT, HTTP_5XX, RATE_LIMIT, HTTP_4XX, CONNECTION, PROTOCOL)


@dataclass
class ChatRequest:
    """One OpenAI chat-completions request.

    ``extra`` is merged into the JSON body (``response_format``, ``guided_json``, ``seed`` ...).
    ``tag`` names the task for accounting and logs.
    """

    messages: list[dict[str, str]]
    max_tokens: int | None = None
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    tag: str = ""

    def body(self, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": self.messages,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "stream": False,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        body.update(self.extra)
        return body


@dataclass
class ChatResult:
    """What happened to one :class:`ChatRequest` (all retries included)."""

    ok: bool
    text: str | None = None
    error_kind: str | None = None
    error: str | None = None
    status: int | None = None
    attempts: int = 0
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    tag: str = ""


@dataclass
class TaskResult:
    """Outcome of one structured task call (transport, parsing, validation, ID checks).

    Attributes:
        ok: ``output`` holds a validated instance of the task's output model.
        output: the validated (and ID-checked) pydantic object, or ``None``.
        value: the task's reading of ``output`` in the caller's terms (e.g. the caller's keys of the
            facts a fact filter kept); equals ``output`` for tasks without IDs.
        error_kind / error: why it failed (see :class:`ErrorKind`).
        requests: HTTP requests sent for this call (0 when served from the cache).
        parse_attempts: model replies parsed (1 + repair rounds).
        cached: served from the response cache.
        prompt_tokens / completion_tokens: tokens of the requests this call sent (0 when served from the cache).
        cached_prompt_tokens / cached_completion_tokens: a cached reply's tokens, as recorded when it was made.
        dropped_ids: IDs the model returned that its prompt never showed (removed from ``output``).
        raw: the last raw model text (useful for debugging failures).
    """

    task: str
    ok: bool
    output: BaseModel | None = None
    value: Any = None
    error_kind: str | None = None
    error: str | None = None
    requests: int = 0
    parse_attempts: int = 0
    cached: bool = False
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    dropped_ids: int = 0
    repaired: bool = False
    raw: str | None = None

    def unwrap(self) -> BaseModel:
        """The output, or a :class:`TaskFailedError` describing why there is none."""
        if not self.ok or self.output is None:
            from hyperrag.llm.errors import TaskFailedError

            raise TaskFailedError(f"task {self.task} failed ({self.error_kind}): {self.error}")
        return self.output
