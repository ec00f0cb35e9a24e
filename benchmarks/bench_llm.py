"""Benchmark of the LLM layer (issue 3). The last printed line is one JSON object.

1. Fault run: OpenIE over N synthetic passages (each passage = one OpenIE request: NER then triples)
   against the fake OpenAI-compatible server (a test double, run in its own process) injecting 20%
   malformed replies, 10% slow replies past the client timeout and 5% HTTP 500s. Counts crashes,
   passages accounted for (schema-valid record or recorded failure) and failures.
2. Rerun: the same job with a fresh process-level state but the same response cache (checkpoint
   removed): requests sent must be 0.
3. Throughput: replies take 100 ms; calls/s at concurrency 64 vs sequential (concurrency 1).
4. ``--real``: SmolLM2-135M (llama.cpp server) OpenIE over the bundled sample corpus: schema-valid
   rate and tokens/s.

    python benchmarks/bench_llm.py [--n 1000] [--real]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hyperrag.llm.backends import LocalLlamaCppServer, OpenAICompatible
from hyperrag.llm.client import client_settings
from hyperrag.llm.openie import run_openie
from hyperrag.llm.tasks.openie_hipporag import NamedEntities, NamedEntityExtraction, Triples

WORDS = ["Avon", "Somerset", "Bristol", "Wessex", "Mendip", "Severn", "Glastonbury", "Bath", "Cheddar", "Wells"]


def passages(n: int) -> list[dict[str, str]]:
    out = []
    for i in range(n):
        a, b, c = WORDS[i % 10], WORDS[(i * 3 + 1) % 10], WORDS[(i * 7 + 2) % 10]
        out.append({"id": f"s{i}", "title": f"{a} Parish {i}",
                    "text": f"{a} Parish {i} lies on the River {b} near {c}. It was recorded in the Domesday "
                            f"Book in {1000 + i % 900} and belongs to the {b} Valley district."})
    return out


class FakeServerProcess:
    """The fake server (tests/llm/fake_server.py, a test double) in its own process."""

    def __init__(self, **faults: Any) -> None:
        cmd = [sys.executable, str(REPO / "tests" / "llm" / "fake_server.py"), "--port", "0"]
        for k, v in faults.items():
            cmd += ["--" + k.replace("_", "-"), str(v)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line.startswith("PORT "):
            raise RuntimeError(f"fake server did not start: {line!r}")
        self.base_url = f"http://127.0.0.1:{int(line.split()[1])}/v1"

    def _root(self) -> str:
        return self.base_url[: -len("/v1")]

    def stats(self) -> dict[str, int]:
        import httpx

        return httpx.get(self._root() + "/_stats", timeout=10).json()

    def configure(self, **kw: Any) -> None:
        import httpx

        httpx.post(self._root() + "/_config", json=kw, timeout=10).raise_for_status()

    def reset(self) -> None:
        import httpx

        httpx.post(self._root() + "/_reset", timeout=10).raise_for_status()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def fake_llm(url: str, cache: Path | None, concurrency: int = 64, timeout_s: float = 1.0) -> OpenAICompatible:
    return OpenAICompatible(
        base_url=url, model="fake-model", api_key_env=None, cache_path=str(cache) if cache else None,
        show_usage=False, max_invalid_retries=3,
        client={"concurrency": concurrency, "timeout_s": timeout_s, "connect_timeout_s": 5.0, "max_retries": 4,
                "backoff_initial_s": 0.05, "backoff_max_s": 0.5},
    )


def valid_docs(path: Path, failed: set[int]) -> int:
    docs = json.loads(path.read_text())["docs"]
    n = 0
    for d in docs:
        if d["idx"] in failed:
            continue
        NamedEntities(named_entities=d["extracted_entities"])
        Triples(triples=d["extracted_triples"])
        n += 1
    return n


def fault_run(n: int, work: Path) -> dict[str, Any]:
    server = FakeServerProcess(malformed=0.2, slow=0.1, slow_s=2.0, http500=0.05, delay_s=0.005, seed=0)
    cache, out = work / "cache.sqlite", work / "openie.json"
    corpus = passages(n)
    res: dict[str, Any] = {"passages": n, "crashes": 0}
    try:
        t0 = time.perf_counter()
        try:
            with fake_llm(server.base_url, cache) as llm:
                report = run_openie(corpus, llm, output_path=out, progress=False)
                tot = llm.accounting.total()
                llm.accounting.print(title="LLM usage — fault run")
        except Exception as err:  # noqa: BLE001 - the benchmark counts crashes instead of dying
            print(f"CRASH: {type(err).__name__}: {err}", file=sys.stderr)
            res["crashes"] = 1
            return res
        res["fault_run_s"] = round(time.perf_counter() - t0, 2)
        failed = set(report.failed)
        valid = valid_docs(out, failed)
        res.update(accounted=valid + len(failed), failed=len(failed), valid=valid, task_calls=tot.calls,
                   http_requests=tot.requests, repaired_json=tot.repaired_json, repair_rounds=tot.repair_rounds,
                   task_failures=dict(tot.failures), injected=server.stats())
        print(f"fault run: {n} passages in {res['fault_run_s']} s — {valid} valid, {len(failed)} recorded failed, "
              f"{tot.requests} HTTP requests, injected {res['injected']}")
        # rerun: new LLM object (as a new process would), same cache, checkpoint removed
        Path(str(out) + ".ckpt.jsonl").unlink(missing_ok=True)
        before = server.stats().get("requests", 0)
        with fake_llm(server.base_url, cache) as llm:
            run_openie(corpus, llm, output_path=work / "openie_rerun.json", progress=False)
            hits = llm.accounting.total().cache_hits
        res["rerun_requests"] = server.stats().get("requests", 0) - before
        print(f"rerun: {res['rerun_requests']} requests sent, {hits} cache hits")
    finally:
        server.stop()
    return res


def throughput(n_seq: int, n_par: int) -> dict[str, Any]:
    server = FakeServerProcess(delay_s=0.1)
    task = NamedEntityExtraction()
    try:
        def rate(concurrency: int, n: int) -> float:
            inputs = [{"passage": p} for p in passages(n)]
            llm = fake_llm(server.base_url, None, concurrency=concurrency, timeout_s=30.0)
            with llm:
                llm.complete_structured_batch(task, inputs[: min(8, n)])  # warm up connections and imports
                t0 = time.perf_counter()
                out = llm.complete_structured_batch(task, inputs)
                dt = time.perf_counter() - t0
            assert all(r.ok for r in out)
            return n / dt

        seq = rate(1, n_seq)
        par = rate(64, n_par)
    finally:
        server.stop()
    print(f"throughput with 100 ms replies: sequential {seq:.1f} calls/s, concurrency 64 {par:.1f} calls/s "
          f"→ {par / seq:.1f}×")
    return {"seq_calls_per_s": round(seq, 2), "c64_calls_per_s": round(par, 1),
            "concurrency_speedup": round(par / seq, 1)}


def real_run(work: Path) -> dict[str, Any]:
    from hyperrag.data.datasets import sample_dir

    rows = [json.loads(x) for x in (sample_dir() / "corpus.jsonl").read_text().splitlines() if x.strip()]
    out = work / "real_openie.json"
    t0 = time.perf_counter()
    # llm=local's client, with the concurrency, read timeout and retries this benchmark's figures were measured with
    client = client_settings("local", concurrency=64, timeout_s=120, max_retries=4)
    with LocalLlamaCppServer(cache_path=str(work / "real_cache.sqlite"), show_usage=False, client=client) as llm:
        start_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        report = run_openie(rows, llm, output_path=out, progress=True)
        wall = time.perf_counter() - t1
        tot = llm.accounting.total()
        llm.accounting.print(title="LLM usage — SmolLM2 OpenIE on the sample corpus")
    valid = valid_docs(out, set(report.failed))
    docs = json.loads(out.read_text())["docs"]
    res = {"real_passages": len(rows), "real_schema_valid_rate": round(valid / len(rows), 3),
           "real_tokens_per_s": round(tot.completion_tokens / wall, 1),
           "real_prompt_tokens_per_s": round(tot.prompt_tokens / wall, 1), "real_wall_s": round(wall, 1),
           "real_server_start_s": round(start_s, 1), "real_calls": tot.calls, "real_failed_calls": tot.failed,
           "real_triples": sum(len(d["extracted_triples"]) for d in docs),
           "real_entities": sum(len(d["extracted_entities"]) for d in docs)}
    print(f"real SmolLM2: {valid}/{len(rows)} passages schema-valid, {res['real_tokens_per_s']} completion tok/s, "
          f"{res['real_triples']} triples")
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="passages (OpenIE requests) in the fault run")
    ap.add_argument("--seq", type=int, default=30, help="calls timed sequentially")
    ap.add_argument("--par", type=int, default=1280, help="calls timed at concurrency 64")
    ap.add_argument("--real", action="store_true", help="also run real SmolLM2 OpenIE on the sample corpus")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_llm_") as tmp:
        work = Path(tmp)
        result = fault_run(args.n, work)
        result.update(throughput(args.seq, args.par))
        if args.real:
            result.update(real_run(work))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
