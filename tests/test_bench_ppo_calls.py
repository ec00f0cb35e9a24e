"""benchmarks/bench_ppo.py's refinement-call count: read from the LLM layer's typed counters (review note)."""

from __future__ import annotations

from types import SimpleNamespace

from hyperrag.llm.accounting import Accounting
from hyperrag.llm.types import TaskResult
from tests.conftest import load_benchmark


def load():
    return load_benchmark("bench_ppo")


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
