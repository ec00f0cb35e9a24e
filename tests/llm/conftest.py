"""Fixtures of the LLM-layer tests: the fake server (a test double) and LLMs pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.fake_server import FakeOpenAIServer

FAST_CLIENT = {"concurrency": 16, "timeout_s": 1.0, "connect_timeout_s": 1.0, "max_retries": 2,
               "backoff_initial_s": 0.01, "backoff_max_s": 0.05}


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def make_llm(fake_server: FakeOpenAIServer, tmp_path: Any):
    """``make_llm(**overrides)`` → an OpenAICompatible LLM on the fake server with a temp cache."""
    from hyperrag.llm.backends import OpenAICompatible

    made = []

    def factory(**kw: Any) -> OpenAICompatible:
        kw.setdefault("cache_path", str(tmp_path / "llm_cache.sqlite"))
        kw["client"] = {**FAST_CLIENT, **kw.get("client", {})}
        kw.setdefault("model", "fake-model")
        kw.setdefault("show_usage", False)
        llm = OpenAICompatible(base_url=fake_server.base_url, api_key_env=None, **kw)
        made.append(llm)
        return llm.start()

    yield factory
    for llm in made:
        llm.stop()
