"""Accounting: per-task counts, union wall time, the end-of-run table and the dry-run estimate."""

from __future__ import annotations

import io
import time

from rich.console import Console

from hyperrag.llm.accounting import Accounting, stats_since
from hyperrag.llm.types import TaskResult


def test_counts_and_failures():
    acc = Accounting()
    acc.record(TaskResult("a", True, requests=2, prompt_tokens=10, completion_tokens=5, parse_attempts=2))
    acc.record(TaskResult("a", False, error_kind="timeout", requests=3))
    acc.record(TaskResult("b", True, cached=True))
    a, tot = acc.tasks["a"], acc.total()
    assert (a.calls, a.ok, a.failed, a.requests, a.repair_rounds) == (2, 1, 1, 5, 1)
    assert dict(a.failures) == {"timeout": 1}
    assert (tot.calls, tot.cache_hits, tot.prompt_tokens) == (3, 1, 10)


def test_snapshot_since_and_merge_move_one_process_counts_to_another():
    """What a DDP rank did during the predict loop (``stats_since`` of two snapshots) merged into rank 0."""
    worker, rank0 = Accounting(), Accounting()
    worker.record(TaskResult("openie", True, requests=1))  # index time: rank 0 did the same work, not sent
    before = worker.snapshot()
    worker.record(TaskResult("openie", False, error_kind="timeout", requests=2))
    worker.record(TaskResult("fact_filter", True, requests=1, prompt_tokens=7))
    sent = stats_since(worker.snapshot(), before)
    assert before["openie"].calls == 1  # the snapshot is a copy, untouched by later calls
    assert {t: (s.calls, s.failed, s.requests, dict(s.failures)) for t, s in sent.items()} == {
        "openie": (1, 1, 2, {"timeout": 1}), "fact_filter": (1, 0, 1, {})}
    rank0.record(TaskResult("fact_filter", True, requests=1, prompt_tokens=3))
    rank0.merge(sent)
    assert (rank0.tasks["fact_filter"].calls, rank0.tasks["fact_filter"].prompt_tokens) == (2, 10)
    assert (rank0.total().calls, dict(rank0.total().failures)) == (3, {"timeout": 1})
    assert stats_since(worker.snapshot(), worker.snapshot()) == {}


def test_wall_time_is_union_of_overlapping_calls():
    acc = Accounting()
    acc.begin("t")
    acc.begin("t")
    time.sleep(0.05)
    acc.end("t")
    acc.end("t")
    assert 0.04 < acc.tasks["t"].wall_s < 0.2


def test_table_prints():
    acc = Accounting()
    acc.record(TaskResult("fact_filter", True, requests=1, prompt_tokens=100, completion_tokens=9))
    buf = io.StringIO()
    acc.print(Console(file=buf, width=200))
    out = buf.getvalue()
    assert "fact_filter" in out and "total" in out and "100" in out


def test_dry_run_estimate_excludes_cached(make_llm, fake_server):
    llm = make_llm()
    inputs = [{"query": f"q{i}", "facts": [("A", "r", "B")]} for i in range(10)]
    est = llm.estimate("fact_filter", inputs)
    assert (est.calls, est.cached, est.requests) == (10, 0, 10) and est.prompt_tokens > 10 * 50
    assert fake_server.stats["requests"] == 0  # a dry run sends nothing
    llm.complete_structured_batch("fact_filter", inputs[:4])
    est2 = llm.estimate("fact_filter", inputs)
    assert (est2.cached, est2.requests) == (4, 6) and est2.prompt_tokens < est.prompt_tokens
    assert "6 requests" in str(est2)
