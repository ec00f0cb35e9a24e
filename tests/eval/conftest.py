"""Helpers of the evaluation tests: a scripted fake LLM server (test double) and a hand-made encoder."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from tests.llm.fake_server import FakeOpenAIServer

FAST_CLIENT = {"concurrency": 8, "timeout_s": 5.0, "connect_timeout_s": 2.0, "max_retries": 1,
               "backoff_initial_s": 0.01, "backoff_max_s": 0.05}


def schema_text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("response_format", {}))


def user_prompt(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


@pytest.fixture
def scripted_llm(tmp_path) -> Iterator[Callable[[Callable[[dict[str, Any]], str]], Any]]:
    """``scripted_llm(responder)`` → a started OpenAI-compatible LLM whose replies come from ``responder``."""
    from hyperrag.llm.backends import OpenAICompatible

    opened: list[tuple[FakeOpenAIServer, Any]] = []

    def factory(responder: Callable[[dict[str, Any]], str]) -> Any:
        server = FakeOpenAIServer(responder=responder).__enter__()
        llm = OpenAICompatible(base_url=server.base_url, api_key_env=None, model="fake-model", show_usage=False,
                               cache_path=str(tmp_path / f"llm{len(opened)}.sqlite"), client=FAST_CLIENT)
        opened.append((server, llm))
        return llm.start()

    yield factory
    for server, llm in opened:
        llm.stop()
        server.__exit__(None, None, None)


class TableEncoder:
    """An encoder with hand-picked unit vectors: known texts map to fixed directions (others to [0, 0, 1])."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def encode(self, texts, desc: str = "") -> torch.Tensor:
        self.calls.append(list(texts))
        rows = [torch.tensor(self.table.get(t, [0.0, 0.0, 1.0]), dtype=torch.float32) for t in texts]
        return torch.nn.functional.normalize(torch.stack(rows), dim=-1)
