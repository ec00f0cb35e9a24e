"""The cost keys of metrics.json (hyperrag/eval/cost.py): phases, backends, per-1,000 figures, folds, bytes."""

from __future__ import annotations

import pytest

from hyperrag.eval.cost import CostMark, combine, directory_bytes, judge_cost, run_cost
from hyperrag.llm.accounting import TaskStats


def stats(calls: int, prompt: int, completion: int, seconds: float = 1.0, hits: int = 0) -> TaskStats:
    return TaskStats(calls=calls, ok=calls, requests=calls - hits, cache_hits=hits, prompt_tokens=prompt,
                     completion_tokens=completion, wall_s=seconds)


def test_phases_and_a_reader_that_is_the_retrieval_llm():
    start = CostMark(10.0, {"openie": stats(4, 400, 40)})   # before the run: not this run's
    loop = CostMark(15.0, {"openie": stats(12, 1200, 120)})  # 8 extractions while indexing
    end = CostMark(17.0, {"openie": stats(12, 1200, 120), "fact_filter": stats(2, 50, 5),
                          "grounded_answer": stats(2, 300, 30, hits=1)})
    keys = run_cost(start, loop, end, 2, has_llm=True, has_reader=True, reader_is_llm=True)
    assert keys["cost.index.seconds"] == 5.0 and keys["cost.query.seconds"] == 2.0
    assert keys["cost.index.retrieval.llm_calls"] == keys["cost.index.llm_calls"] == 8
    assert keys["cost.index.retrieval.prompt_tokens"] == 800 and keys["cost.index.reader.llm_calls"] == 0
    assert keys["cost.query.retrieval.llm_calls"] == 2 and keys["cost.query.reader.llm_calls"] == 2
    assert keys["cost.query.reader.llm_requests"] == 1 and keys["cost.query.reader.cache_hits"] == 1
    assert keys["cost.query.prompt_tokens"] == 350 and keys["cost.query.completion_tokens"] == 35
    assert keys["cost.query.reader.prompt_tokens_per_1k_queries"] == 150_000.0
    assert keys["cost.query.seconds_per_1k_queries"] == 1000.0
    assert not any(k.startswith("cost.index.") and k.endswith("_per_1k_queries") for k in keys)


def test_a_reader_of_its_own_and_an_llm_free_run():
    end = CostMark(3.0, {}, {"grounded_answer": stats(5, 500, 50)})
    keys = run_cost(CostMark(0.0), CostMark(1.0), end, 5, has_llm=False, has_reader=True, reader_is_llm=False)
    assert keys["cost.query.reader.llm_calls"] == keys["cost.query.llm_calls"] == 5
    assert not any(".retrieval." in k for k in keys)  # no retrieval LLM configured: no keys of its own
    free = run_cost(CostMark(0.0), CostMark(1.0), CostMark(2.0), 5, has_llm=False, has_reader=False,
                    reader_is_llm=True)
    assert free["cost.query.llm_calls"] == free["cost.index.llm_calls"] == 0
    assert not any(k.count(".") > 2 for k in free)  # totals only
    assert run_cost(CostMark(0.0), CostMark(1.0), CostMark(2.0), 0, has_llm=False, has_reader=False,
                    reader_is_llm=True).keys().isdisjoint({"cost.query.seconds_per_1k_queries"})  # nothing retrieved


def test_folds_add_up():
    a = {"cost.query.llm_calls": 4, "cost.query.seconds": 1.5, "cost.query.llm_calls_per_1k_queries": 2000.0,
         "cost.index.seconds": 3.0, "index_bytes": 100, "recall@5": 50.0}
    b = {"cost.query.llm_calls": 6, "cost.query.seconds": 2.5, "cost.query.llm_calls_per_1k_queries": 2000.0,
         "cost.index.seconds": 4.0, "index_bytes": 120, "recall@5": 70.0}
    out = combine([a, b], queries=5)
    assert out == {"cost.query.llm_calls": 10, "cost.query.seconds": 4.0, "cost.index.seconds": 7.0,
                   "cost.query.llm_calls_per_1k_queries": 2000.0, "cost.query.seconds_per_1k_queries": 800.0,
                   "index_bytes": 120}


def test_directory_bytes_counts_each_file_once_without_the_lock(tmp_path):
    (tmp_path / "idx" / "gen-1").mkdir(parents=True)
    (tmp_path / "idx" / "manifest.json").write_bytes(b"x" * 10)
    (tmp_path / "idx" / "gen-1" / "graph.pt").write_bytes(b"x" * 100)
    (tmp_path / "idx" / ".writer.lock").write_bytes(b"")
    (tmp_path / "idx" / ".writer.lock.json").write_bytes(b"x" * 50)
    assert directory_bytes([tmp_path / "idx", tmp_path / "idx" / "gen-1", tmp_path / "missing"]) == 110


@pytest.mark.parametrize("phase", ["index", "query"])
def test_seconds_are_never_negative(phase):
    keys = run_cost(CostMark(0.0), CostMark(0.0), CostMark(0.0), 1, has_llm=False, has_reader=False,
                    reader_is_llm=True)
    assert keys[f"cost.{phase}.seconds"] == 0.0


def test_the_judge_of_an_evaluation():
    before = CostMark(1.0, {"groundedness": stats(2, 20, 2)})
    after = CostMark(4.0, {"groundedness": stats(12, 220, 22), "answer_relevancy": stats(10, 100, 10)})
    keys = judge_cost(before, after, queries=10)
    assert keys["cost.evaluate.seconds"] == 3.0 and keys["cost.evaluate.judge.llm_calls"] == 20
    assert keys["cost.evaluate.judge.prompt_tokens_per_1k_queries"] == 30_000.0
