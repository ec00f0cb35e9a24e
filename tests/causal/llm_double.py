"""Helpers to point an OpenAICompatible LLM at the scripted fake server (a test double)."""

from __future__ import annotations

import json
from typing import Any


def fake_llm(server: Any, tmp_path: Any, **kw: Any):  # type: ignore[no-untyped-def]
    from hyperrag.llm.backends import OpenAICompatible

    return OpenAICompatible(base_url=server.base_url, model="fake", api_key_env=None, show_usage=False,
                            cache_path=str(tmp_path / "llm.sqlite"),
                            client={"concurrency": 4, "timeout_s": 5, "connect_timeout_s": 10, "max_retries": 1,
                                    "backoff_initial_s": 0.01, "backoff_max_s": 0.05}, **kw)


def schema_text(body: dict) -> str:
    return json.dumps(body.get("response_format", {}))


def system_text(body: dict) -> str:
    return body["messages"][0]["content"]


def user_text(body: dict) -> str:
    return body["messages"][-1]["content"]


def task_of(body: dict) -> str:
    """Which task a request belongs to, from its schema and system prompt."""
    spec, system = schema_text(body), system_text(body)
    if "causal_links" in spec:
        return "causal_context_rewrite"
    if '"correct"' in spec and '"refined"' in spec:
        return "causal_pair_verification"
    if '"judgements"' in spec:
        return "causal_entailment"
    if '"claims"' in spec:
        return "claim_extraction"
    if '"verdict"' in spec:
        return "claim_support"
    if '"queries"' in spec:
        return "query_refinement"
    if "revise a draft answer" in system:
        return "strict_rewrite"
    if "supporting_ids" in spec:
        return "grounded_answer"
    return "other"
