"""The HTTP client: retries, timeouts, error records instead of exceptions, bounded concurrency."""

from __future__ import annotations

import asyncio
import time

from hyperrag.llm.client import ChatClient, ClientConfig, run_batch, run_sync
from hyperrag.llm.server import free_port
from hyperrag.llm.types import ChatRequest, ErrorKind
from tests.llm.conftest import FAST_CLIENT
from tests.llm.fake_server import Reply


def _req(text: str = "hi", **kw) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": text}], max_tokens=16, **kw)


def test_success_record_has_text_tokens_latency(fake_server):
    fake_server.enqueue('{"ok": true}')
    [res] = run_batch([_req(tag="t")], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)
    assert res.ok and res.text == '{"ok": true}' and res.attempts == 1 and res.tag == "t"
    assert res.prompt_tokens > 0 and res.completion_tokens > 0 and res.latency_s > 0
    body = fake_server.requests[0]
    assert body["model"] == "m" and body["max_tokens"] == 16 and body["temperature"] == 0.0


def test_retries_5xx_then_succeeds(fake_server):
    fake_server.enqueue(Reply(status=500, body="boom"), Reply(status=503, body="busy"), '{"a": 1}')
    [res] = run_batch([_req()], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)
    assert res.ok and res.attempts == 3 and fake_server.stats["requests"] == 3


def test_persistent_5xx_is_recorded_not_raised(fake_server):
    fake_server.enqueue(*[Reply(status=500, body="boom")] * 3)
    [res] = run_batch([_req()], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)
    assert not res.ok and res.error_kind == ErrorKind.HTTP_5XX and res.status == 500
    assert res.attempts == FAST_CLIENT["max_retries"] + 1


def test_4xx_is_not_retried(fake_server):
    fake_server.enqueue(Reply(status=400, body='{"error": "bad model"}'), '{"never": "sent"}')
    [res] = run_batch([_req()], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)
    assert not res.ok and res.error_kind == ErrorKind.HTTP_4XX and res.attempts == 1


def test_429_is_retried(fake_server):
    fake_server.enqueue(Reply(status=429, body="slow down"), '{"a": 1}')
    [res] = run_batch([_req()], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)
    assert res.ok and res.attempts == 2


def test_timeout_then_retry_succeeds(fake_server):
    cfg = {**FAST_CLIENT, "timeout_s": 0.2}
    fake_server.enqueue(Reply('{"slow": 1}', delay_s=0.6), '{"fast": 1}')
    [res] = run_batch([_req()], base_url=fake_server.base_url, model="m", config=cfg)
    assert res.ok and res.text == '{"fast": 1}' and res.attempts == 2


def test_timeouts_exhausted_recorded(fake_server):
    cfg = {**FAST_CLIENT, "timeout_s": 0.15, "max_retries": 1}
    fake_server.enqueue(*[Reply("{}", delay_s=0.5)] * 2)
    [res] = run_batch([_req()], base_url=fake_server.base_url, model="m", config=cfg)
    assert not res.ok and res.error_kind == ErrorKind.TIMEOUT and res.attempts == 2


def test_protocol_error_on_non_openai_body(fake_server):
    fake_server.enqueue(Reply(status=200, body="<html>proxy page</html>"))
    [res] = run_batch([_req()], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)
    assert not res.ok and res.error_kind == ErrorKind.PROTOCOL


def test_connection_refused_is_recorded():
    url = f"http://127.0.0.1:{free_port()}/v1"
    [res] = run_batch([_req()], base_url=url, model="m", config={**FAST_CLIENT, "max_retries": 1})
    assert not res.ok and res.error_kind == ErrorKind.CONNECTION and res.attempts == 2


def test_concurrency_is_bounded_and_used(fake_server):
    fake_server.configure(delay_s=0.15)
    reqs = [_req(str(i)) for i in range(8)]
    t0 = time.perf_counter()
    res = run_batch(reqs, base_url=fake_server.base_url, model="m", config={**FAST_CLIENT, "concurrency": 8})
    parallel = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_batch(reqs, base_url=fake_server.base_url, model="m", config={**FAST_CLIENT, "concurrency": 2})
    bounded = time.perf_counter() - t0
    assert all(r.ok for r in res)
    assert parallel < 0.6  # ~1 round of 0.15 s
    assert bounded >= 4 * 0.15 * 0.9  # 4 rounds of 2


def test_results_keep_input_order(fake_server):
    fake_server.responder = lambda body: Reply(body["messages"][0]["content"], delay_s=0.05 * (body["messages"][0]["content"] == "0"))
    res = run_batch([_req(str(i)) for i in range(6)], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)
    assert [r.text for r in res] == [str(i) for i in range(6)]


def test_run_sync_inside_running_loop(fake_server):
    fake_server.enqueue('{"x": 1}')

    async def caller():  # e.g. a notebook: sync facade called while a loop runs
        return run_batch([_req()], base_url=fake_server.base_url, model="m", config=FAST_CLIENT)

    [res] = asyncio.run(caller())
    assert res.ok
    assert run_sync(lambda: asyncio.sleep(0, result=5)) == 5


def test_async_client_and_model_listing(fake_server):
    async def go():
        async with ChatClient(fake_server.base_url, "m", api_key="secret", config=ClientConfig(**{**FAST_CLIENT, "concurrency": 4})) as c:
            return await c.list_models()

    assert run_sync(go) == ["fake-model"]
