"""What the CDF-RAG benches share (``bench_ppo.py``, ``bench_cdfrag_attribution.py``, ``bench_cdfrag_fallback.py``):
the started LLM and the preset's settings with the one causal graph every run shares (the JSON result line:
``bench_results.emit``).

One causal graph for every run: pair verification is off (``causal.verify: false``). The oracle has no gold for pair
verification (each call would fail and leave the pair unverified — the same graph), LLM-free runs have no verifier,
and SmolLM2 verifying every pair is out of a shared 2-core machine's budget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any


def bench_llm(name: str, dataset: Any, overrides: Sequence[str] = ()) -> Any:
    """The started LLM of ``hydra_configs/llm/<name>.yaml`` (``none``: no LLM) with Hydra ``overrides`` (e.g.
    ``llm.refinement=no_answers``), bound to ``dataset`` (the oracle answers from its gold); the caller stops it."""
    from hyperrag.config import compose_config
    from hyperrag.llm import build_llm

    cfg = compose_config("retrieve", [f"llm={name}", *overrides]).llm if name != "none" else None
    llm = build_llm(cfg, dataset=dataset)
    llm.start()
    return llm


def shared_graph_settings(classifier: str, models_dir: str, **changes: Any) -> Any:
    """``method/cdfrag.yaml``'s settings without a policy, with the shared causal graph (pair verification off) and
    ``changes`` replaced (``causal`` itself is not one of them)."""
    from hyperrag.config import method_settings

    base = method_settings("cdfrag", policy=None, classifier=classifier, models_dir=str(models_dir))
    return dataclasses.replace(base, causal=dataclasses.replace(base.causal, verify=False), **changes)
