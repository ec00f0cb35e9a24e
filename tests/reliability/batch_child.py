"""Batch retrieval of synthesised queries over the sample corpus, as a child process to kill and rerun.

    python -m tests.reliability.batch_child OUT N [BASE_URL] [--delay S]

BM25 over the bundled sample corpus; with ``BASE_URL`` the grounded-answer reader runs against that
(fake) OpenAI-compatible server with a short timeout and few retries. Prints the metrics as one JSON
line. Used by the SIGKILL tests and ``benchmarks/bench_reliability.py``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.data.types import Dataset, Query
from hyperrag.retrievers import BM25Retriever


def synthetic_dataset(n: int) -> Dataset:
    """``n`` queries built from the sample passages (``s0``, ``s1``...), gold = the passage they quote."""
    ds = sample_dataset()
    queries = []
    for i in range(n):
        p = ds.corpus[i % len(ds.corpus)]
        words = p.text.split()
        start = (i // len(ds.corpus)) % max(1, len(words) - 6)
        queries.append(Query(f"s{i}", f"What does this say about {p.title}: {' '.join(words[start:start + 6])}?",
                             (p.title,), (p.id,)))
    ds.queries = queries
    return ds


class SlowBM25(BM25Retriever):
    """BM25 that sleeps per batch (to give a killer time to strike) and counts what it retrieved."""

    def __init__(self, delay: float = 0.0, **kw) -> None:
        super().__init__(method_settings("bm25"), **kw)
        self.delay = delay
        self.retrieved = 0

    def retrieve(self, questions, top_k):
        time.sleep(self.delay)
        self.retrieved += len(questions)
        return super().retrieve(questions, top_k)


def make_llm(base_url: str | None, cache: Path | None = None):
    if not base_url:
        return None
    from hyperrag.llm.backends import OpenAICompatible

    return OpenAICompatible(base_url=base_url, model="fake-model", api_key_env=None, show_usage=False,
                            cache_path=str(cache) if cache else None,
                            client={"concurrency": 16, "timeout_s": 0.5, "connect_timeout_s": 1.0, "max_retries": 1,
                                    "backoff_initial_s": 0.01, "backoff_max_s": 0.05},
                            max_invalid_retries=1)


def run(out: str | Path, n: int, base_url: str | None = None, delay: float = 0.0, batch_size: int = 16) -> dict:
    from hyperrag.runners.batch_retrieval import run_batch_retrieval

    ds = synthetic_dataset(n)
    retriever = SlowBM25(delay=delay)
    retriever.index(ds)
    llm = make_llm(base_url)
    try:
        if llm is not None:
            llm.start()
        metrics = run_batch_retrieval(ds, retriever, out, top_k=5, ks=(2, 5), batch_size=batch_size,
                                      accelerator="cpu", llm=llm, answer_top_n=3 if llm else 0)
    finally:
        if llm is not None:
            llm.stop()
    metrics["retrieved_this_run"] = retriever.retrieved
    return metrics


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("n", type=int)
    ap.add_argument("base_url", nargs="?", default=None)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()
    print(json.dumps(run(args.out, args.n, args.base_url, args.delay, args.batch_size)), flush=True)


if __name__ == "__main__":
    main()
