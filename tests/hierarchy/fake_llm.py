"""TEST DOUBLE helpers: an OpenAI-compatible LLM pointed at the scripted fake server of ``tests/llm/fake_server.py``.

Nothing here is a model: the server's replies are synthesised by the responders the tests pass in.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.llm.fake_server import FakeOpenAIServer

FAST_CLIENT = {"concurrency": 8, "timeout_s": 2.0, "connect_timeout_s": 1.0, "max_retries": 0,
               "backoff_initial_s": 0.01, "backoff_max_s": 0.02}


def schema_text(body: dict[str, Any]) -> str:
    """The constrained-decoding payload of a request, as text (tells the tasks apart)."""
    return json.dumps(body.get("response_format", {}))


def prompt_of(body: dict[str, Any]) -> str:
    return body["messages"][-1]["content"]


def gate_pair(body: dict[str, Any]) -> tuple[str, str] | None:
    """A causal-gate request's A and B texts, in either Fig 9 form (as printed: ``A: ...`` / ``B: ...`` lines;
    ``paper_json`` / ``extended``: ``<node>`` blocks); ``None`` for another request."""
    prompt = prompt_of(body)
    m = re.search(r'id="A">\n(.*?)\n</node>.*?id="B">\n(.*?)\n</node>', prompt, re.DOTALL)
    if m is None:
        m = re.search(r"-Real Data-\nA: (.*?)\nB: (.*)\n#####\nOutput:$", prompt, re.DOTALL)
    return (m.group(1), m.group(2)) if m else None


def paper_figure(body: dict[str, Any]) -> str | None:
    """Which HugRAG figure a request sends as printed (``prompts: paper``: no grammar, no system message):
    ``"5"``, ``"6"``, ``"7"`` or ``"9"``; ``None`` for any other request."""
    if "response_format" in body or len(body["messages"]) != 1:
        return None
    prompt = prompt_of(body)
    for figure, marker in (("9", "-Real Data-\nA: "), ("5", "'ct_precise' length"), ("6", "`precise` length"),
                           ("7", "---Evidence Context---")):
        if marker in prompt:
            return figure
    return None


@contextmanager
def fake_llm(responder: Any, cache_dir: Path, **kw: Any):
    """``with fake_llm(responder, tmp_path) as (llm, server):`` — a scripted fake server and an LLM on it."""
    from hyperrag.llm.backends import OpenAICompatible

    with FakeOpenAIServer(responder=responder) as server:
        llm = OpenAICompatible(base_url=server.base_url, api_key_env=None, model="fake-model", show_usage=False,
                               cache_path=str(cache_dir / "llm_cache.sqlite"), client=FAST_CLIENT,
                               max_invalid_retries=kw.pop("max_invalid_retries", 0), **kw)
        llm.start()
        try:
            yield llm, server
        finally:
            llm.stop()
