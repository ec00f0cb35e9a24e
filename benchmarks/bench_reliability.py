"""Reliability figures: SIGKILLs during OpenIE, a 1,000-query batch under LLM faults, fuzzed inputs.

    python benchmarks/bench_reliability.py [--kills 10] [--queries 1000] [--fuzz 300] [--cli-fuzz 30]

(a) ``--kills`` random SIGKILLs during OpenIE indexing of the sample corpus against the scripted fake
    server (deterministic replies), each followed by a rerun; the final OpenIE file is compared with an
    uninterrupted run's (``identical``) and requests for passages finished before a run are counted
    (``repeated_requests``).
(b) ``--queries`` synthesised queries, BM25 + the QA reader against the fake server with a fault mix
    (timeouts, HTTP 500s, invalid JSON, out-of-set IDs, slow replies); the run is SIGKILLed once midway
    and rerun; ``unaccounted`` = queries without exactly one prediction row, ``crashes`` = runs that raised.
(c) ``--fuzz`` generated files per reader (JSONL corpus and queries, MuSiQue/OpenIE JSON) plus ``--cli-fuzz``
    in-process retrieve.py runs; ``tracebacks`` = anything but a result or a one-line exit 2.
Prints progress, then one JSON object on the last line. Needs the repository root on ``sys.path``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def bench_openie(kills: int, seed: int) -> dict:
    from tests.reliability.openie_kill import kill_and_resume

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = kill_and_resume(Path(tmp), kills, seed=seed)
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def bench_batch(n: int, seed: int) -> dict:
    from hyperrag.utils.atomic import read_jsonl_log
    from tests.llm.fake_server import FakeOpenAIServer
    from tests.reliability import batch_child

    crashes = 0
    killed = False
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        server._httpd.handle_error = lambda *a: None  # a killed client resets its connections: expected
        server.configure(http500=0.05, slow=0.05, slow_s=0.8, malformed=0.1, bad_ids=0.1, seed=seed)
        out = Path(tmp) / "run"
        log = out / "predictions.jsonl"
        child = subprocess.Popen([sys.executable, "-m", "tests.reliability.batch_child", str(out), str(n),
                                  server.base_url, "--batch-size", "32"], cwd=REPO,
                                 env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and child.poll() is None:
            if log.exists() and log.read_bytes().count(b"\n") >= n // 3:
                os.kill(child.pid, signal.SIGKILL)  # the child we started
                killed = True
                break
            time.sleep(0.05)
        child.wait()
        resumed_from = len(read_jsonl_log(log, repair=False))
        try:
            metrics = batch_child.run(out, n, server.base_url, batch_size=32)
        except Exception as err:  # noqa: BLE001 - counted, reported
            crashes += 1
            metrics = {"error": repr(err)}
        rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        ids = [r["id"] for r in rows]
        expected = {f"s{i}" for i in range(n)}
        unaccounted = len(expected - set(ids)) + (len(ids) - len(set(ids))) + len(set(ids) - expected)
        stats = dict(server.stats)
    return {"queries": n, "killed_once": killed, "resumed_from": resumed_from, "unaccounted": unaccounted,
            "crashes": crashes, "answer_ok": sum(bool(r.get("answer_ok")) for r in rows),
            "answer_failures": metrics.get("answer_failures"), "recall@5": metrics.get("recall@5"),
            "faults_injected": {k: v for k, v in stats.items() if k.startswith("fault_")},
            "llm_requests": stats.get("requests", 0), "seconds": round(time.perf_counter() - t0, 1)}


def bench_fuzz(examples: int, cli_examples: int, seed: int) -> dict:
    import traceback

    from hypothesis import HealthCheck, given, settings

    from hyperrag.errors import InputError
    from tests.data import test_fuzz_readers as readers
    from tests.reliability.cli_fuzz import run_retrieve
    from tests.reliability.fuzz_inputs import json_documents, jsonl_files

    counts = {"reader_inputs": 0, "cli_inputs": 0, "tracebacks": 0, "clean_errors": 0}
    samples: list[str] = []

    def guarded(check, data):
        counts["reader_inputs"] += 1
        try:
            check(data)
            counts["clean_errors"] += 0
        except InputError:
            counts["tracebacks"] += 1  # the checks catch InputError themselves; one escaping is a bug
        except Exception:  # noqa: BLE001
            counts["tracebacks"] += 1
            samples.append(traceback.format_exc(limit=3))

    opts = settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None,
                    derandomize=True)
    given(jsonl_files())(opts(lambda data: guarded(readers.check_corpus, data)))()
    given(jsonl_files(("id", "question", "answers", "gold_ids")))(opts(lambda d: guarded(readers.check_queries, d)))()
    given(json_documents())(opts(lambda data: guarded(readers.check_documents, data)))()

    good_queries = b'{"id": "q", "question": "what is alpha?"}\n'
    outcomes: dict[str, int] = {}

    def cli(data):
        counts["cli_inputs"] += 1
        outcome, text = run_retrieve(data, good_queries)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "traceback":
            counts["tracebacks"] += 1
            samples.append(text[-1500:])

    cli_opts = settings(max_examples=cli_examples, deadline=None, suppress_health_check=list(HealthCheck),
                        database=None, derandomize=True)
    given(jsonl_files())(cli_opts(cli))()
    return {"inputs_tried": counts["reader_inputs"] + counts["cli_inputs"], **counts, "cli_outcomes": outcomes,
            "traceback_samples": samples[:2]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--fuzz", type=int, default=300, help="generated inputs per reader")
    ap.add_argument("--cli-fuzz", type=int, default=30, help="generated corpus files run through retrieve.py")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    openie = bench_openie(args.kills, args.seed)
    print("openie:", json.dumps(openie), flush=True)
    batch = bench_batch(args.queries, args.seed)
    print("batch:", json.dumps(batch), flush=True)
    fuzz = bench_fuzz(args.fuzz, args.cli_fuzz, args.seed)
    print("fuzz:", json.dumps(fuzz), flush=True)
    result = {
        "bench": "reliability", "kills": openie["kills"], "identical": openie["identical"],
        "repeated_requests": openie["repeated_requests"], "batch_queries": batch["queries"],
        "unaccounted": batch["unaccounted"], "crashes": batch["crashes"], "batch_killed_once": batch["killed_once"],
        "batch_answer_ok": batch["answer_ok"], "faults_injected": batch["faults_injected"],
        "fuzz_inputs": fuzz["inputs_tried"], "tracebacks": fuzz["tracebacks"],
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
