"""benchmarks/bench_ppo.py's refinement-call count: read from the LLM layer's typed counters (review note)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

from hyperrag.llm.accounting import Accounting
from hyperrag.llm.types import TaskResult

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_ppo.py"


def load():
    sys.path.insert(0, str(SCRIPT.parent))  # its sibling modules (bench_results, cdfrag_setup), as when run as a script
    spec = importlib.util.spec_from_file_location("bench_ppo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_ppo"] = module
    spec.loader.exec_module(module)
    return module


def test_refinement_calls_counts_only_refinement_tasks_and_their_no_gold_failures():
    acc = Accounting()
    for ok in (True, True, False):
        acc.record(TaskResult(task="query_refinement_decompose", ok=ok, error_kind=None if ok else "no_gold"))
    acc.record(TaskResult(task="query_refinement_expand", ok=False, error_kind="schema"))
    acc.record(TaskResult(task="answer", ok=False, error_kind="no_gold"))  # not a refinement: left out
    out = load().refinement_calls(SimpleNamespace(accounting=acc), SimpleNamespace(refiner=SimpleNamespace(llm_failed=2)))
    assert out["calls"] == 4 and out["no_gold"] == 1 and out["stand_in_ran"] == 2
    assert out["per_action"]["query_refinement_decompose"] == {"calls": 3, "ok": 2, "failures": {"no_gold": 1}}
    assert out["per_action"]["query_refinement_expand"]["failures"] == {"schema": 1}
    # no accounting (an LLM-free run): nothing counted
    empty = load().refinement_calls(SimpleNamespace(), SimpleNamespace(refiner=SimpleNamespace(llm_failed=0)))
    assert empty == {"per_action": {}, "calls": 0, "no_gold": 0, "stand_in_ran": 0}
