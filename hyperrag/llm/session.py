"""One event loop's worth of structured task calls: cache → request → parse/validate → repair → record.

A :class:`Session` owns a :class:`~hyperrag.llm.client.ChatClient` bound to the running loop. For
each task call it looks the request up in the response cache; otherwise it sends the task's messages
with the backend's constrained-decoding payload, parses the reply (json-repair + pydantic + ID
checks) and, when the reply is invalid, asks again with the validation error appended (up to
``max_invalid_retries`` times) before recording the call as failed. Only valid replies are cached.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from typing_extensions import Self

from hyperrag.llm.cache import cache_key
from hyperrag.llm.client import ChatClient
from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.structured import response_format_body
from hyperrag.llm.types import ChatRequest, ErrorKind, TaskResult

if TYPE_CHECKING:
    from hyperrag.llm.accounting import Accounting
    from hyperrag.llm.cache import ResponseCache
    from hyperrag.llm.tasks.base import Task

REPAIR_PROMPT = (
    "Your previous reply could not be used: {error}. Reply again with one JSON object that follows the "
    "required format exactly, and nothing else."
)
#: the same for a task read as free text (a paper's prompt as printed, ``Task.structured`` false): no JSON asked
REPAIR_PROMPT_TEXT = (
    "Your previous reply could not be used: {error}. Reply again exactly in the format the instructions ask for, "
    "and nothing else."
)


@dataclass
class Sampling:
    """Decoding settings (Hydra: ``llm.sampling``); ``max_tokens=None`` uses each task's default."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int | None = None
    seed: int | None = 0

    @classmethod
    def from_any(cls, value: Sampling | Mapping[str, Any] | None) -> Sampling:
        if value is None:
            return cls()
        return value if isinstance(value, cls) else cls(**dict(value))

    def for_task(self, task: Task) -> dict[str, Any]:
        return {"temperature": self.temperature, "top_p": self.top_p,
                "max_tokens": self.max_tokens or task.max_tokens, "seed": self.seed}


@dataclass
class Prepared:
    """A task call ready to send: messages, sampling, structured payload and cache key."""

    task: Task
    inputs: Mapping[str, Any]
    messages: list[dict[str, str]]
    sampling: dict[str, Any]
    structured: dict[str, Any]
    key: str


def prepare(task: Task, inputs: Mapping[str, Any], *, model: str, mode: str, sampling: Sampling) -> Prepared:
    messages = task.messages(inputs)
    mode = mode if task.structured else "none"  # a prompt as printed: no grammar, the task reads the free text
    structured = response_format_body(mode, task.schema(), task.name)
    samp = sampling.for_task(task)
    key = cache_key(model=model, messages=messages, sampling=samp,
                    structured={"mode": mode, "schema": task.schema_hash}, task=task.key)
    return Prepared(task, inputs, messages, samp, structured, key)


class Session:
    """Structured calls inside one running event loop (``async with llm.session() as s``)."""

    def __init__(
        self,
        client: ChatClient,
        *,
        mode: str,
        sampling: Sampling,
        cache: ResponseCache | None,
        accounting: Accounting,
        max_invalid_retries: int = 2,
    ) -> None:
        self.client = client
        self.mode = mode
        self.sampling = sampling
        self.cache = cache
        self.accounting = accounting
        self.max_invalid_retries = max_invalid_retries

    async def __aenter__(self) -> Self:
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.__aexit__(*exc)

    def prepare(self, task: Task, inputs: Mapping[str, Any]) -> Prepared:
        return prepare(task, inputs, model=self.client.model, mode=self.mode, sampling=self.sampling)

    async def complete(self, task: Task, inputs: Mapping[str, Any]) -> TaskResult:
        """One structured call; never raises for model or transport failures."""
        self.accounting.begin(task.label)
        try:
            result = await self._complete(self.prepare(task, inputs))
        finally:
            self.accounting.end(task.label)
        self.accounting.record(result)
        return result

    async def complete_many(
        self,
        task: Task,
        inputs_list: Sequence[Mapping[str, Any]],
        on_result: Callable[[int, TaskResult], None] | None = None,
    ) -> list[TaskResult]:
        """Many calls of one task concurrently (bounded by the client), results in input order."""

        async def one(i: int, inputs: Mapping[str, Any]) -> TaskResult:
            res = await self.complete(task, inputs)
            if on_result is not None:
                on_result(i, res)
            return res

        return list(await asyncio.gather(*(one(i, x) for i, x in enumerate(inputs_list))))

    async def _complete(self, p: Prepared) -> TaskResult:
        task = p.task
        start = time.perf_counter()
        if self.cache is not None:
            hit = self.cache.get(p.key)
            if hit is not None:
                try:
                    parsed = task.parse(hit.raw, p.inputs)
                except OutputInvalid:  # schema tightened without a version bump: drop and re-ask
                    self.cache.delete(p.key)
                else:
                    return TaskResult(task.label, True, parsed.output, parsed.value, cached=True,
                                      parse_attempts=1, dropped_ids=parsed.dropped_ids, repaired=parsed.repaired,
                                      latency_s=time.perf_counter() - start, raw=hit.raw,
                                      cached_prompt_tokens=hit.prompt_tokens,
                                      cached_completion_tokens=hit.completion_tokens)
        res = await self._ask(p)
        res.latency_s = time.perf_counter() - start
        return res

    async def _ask(self, p: Prepared) -> TaskResult:
        """Send, parse and validate (asking again after an invalid reply); cache what validates."""
        task = p.task
        res = TaskResult(task.label, False)
        conversation = list(p.messages)
        for _ in range(1 + self.max_invalid_retries):
            request = ChatRequest(conversation, max_tokens=p.sampling["max_tokens"],
                                  temperature=p.sampling["temperature"], top_p=p.sampling["top_p"],
                                  seed=p.sampling["seed"], extra=p.structured, tag=task.label)
            reply = await self.client.chat(request)
            res.requests += reply.attempts
            res.prompt_tokens += reply.prompt_tokens
            res.completion_tokens += reply.completion_tokens
            if not reply.ok:
                res.error_kind, res.error = reply.error_kind, reply.error
                break
            res.parse_attempts += 1
            res.raw = reply.text
            try:
                parsed = task.parse(reply.text or "", p.inputs)
            except OutputInvalid as err:
                res.error_kind, res.error = ErrorKind.INVALID_OUTPUT, str(err)
                conversation = [*p.messages, {"role": "assistant", "content": (reply.text or "")[:4000]},
                                {"role": "user", "content": (REPAIR_PROMPT if task.structured else
                                                             REPAIR_PROMPT_TEXT).format(error=str(err)[:300])}]
                continue
            res.ok, res.output, res.value = True, parsed.output, parsed.value
            res.dropped_ids, res.repaired = parsed.dropped_ids, parsed.repaired
            res.error_kind = res.error = None
            if self.cache is not None:
                self.cache.put(p.key, task=task.key, model=self.client.model, raw=reply.text or "",
                               prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens)
            break
        return res
