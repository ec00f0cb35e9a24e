"""Environments built the way ``train.py task=ppo`` builds them: ``task/ppo.yaml``'s ``env`` node, changed only where
a test says so (``hallucination`` off unless a test turns it on: no test here generates answers for λ4)."""

from __future__ import annotations

from typing import Any

from hyperrag.config.compose import task_arguments
from hyperrag.refinement.env import RefinementEnv


def make_env(retriever: Any, queries: Any, **changes: Any) -> RefinementEnv:
    """``RefinementEnv(retriever, queries, **env)`` with the YAML's env settings and ``changes`` over them."""
    return RefinementEnv(retriever, queries, **{**task_arguments("ppo", "env"), "hallucination": False, **changes})
