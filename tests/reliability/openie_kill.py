"""SIGKILL-and-rerun harness for OpenIE indexing of the sample corpus against the fake server.

The fake server answers deterministically per prompt (so an interrupted run can be compared with an
uninterrupted one) and counts requests per passage, so re-sent requests for finished passages show.
Used by ``tests/reliability/test_resume.py`` and ``benchmarks/bench_reliability.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.llm.fake_server import FakeOpenAIServer, schema_reply

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import sys
from hyperrag.data import sample_dataset
from hyperrag.llm.backends import OpenAICompatible
from hyperrag.llm.openie import run_openie
llm = OpenAICompatible(base_url=sys.argv[1], model="fake-model", api_key_env=None, cache_path=None, show_usage=False,
                       client={"concurrency": 1, "timeout_s": 5, "connect_timeout_s": 10, "max_retries": 4,
                               "backoff_initial_s": 0.5, "backoff_max_s": 8})
run_openie(sample_dataset().corpus.passages, llm, output_path=sys.argv[2], progress=False)
"""


def passage_key(body: dict[str, Any]) -> str:
    text = body["messages"][-1]["content"]
    start = text.rfind("<passage>")  # the last block is the passage itself (earlier ones are examples)
    return hashlib.sha1(text[start:start + 80].encode()).hexdigest()[:12] if start >= 0 else "?"


class CountingServer(FakeOpenAIServer):
    """TEST DOUBLE: deterministic replies (seeded by the prompt) and request counts per (task, passage)."""

    def __init__(self, delay_s: float = 0.0) -> None:
        super().__init__(responder=self.reply)
        self.configure(delay_s=delay_s)
        self.per_request: Counter = Counter()

    def reply(self, body: dict[str, Any]) -> str:
        prompt = json.dumps(body.get("messages"), sort_keys=True)
        task = hashlib.sha1(body.get("messages", [{}])[0].get("content", "").encode()).hexdigest()[:8]
        self.per_request[(task, passage_key(body))] += 1
        return schema_reply(body, random.Random(hashlib.sha1(prompt.encode()).hexdigest()))


def finished_passages(checkpoint: Path) -> set[int]:
    if not checkpoint.exists():
        return set()
    out = set()
    for line in checkpoint.read_bytes().split(b"\n"):
        try:
            out.add(int(json.loads(line)["idx"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def run_child(server: CountingServer, out: Path, kill_at: int | None, jitter_s: float = 0.0) -> bool:
    """Run OpenIE in a child; SIGKILL it once ``kill_at`` passages are checkpointed (plus ``jitter_s``).

    Returns True when it was killed mid-run.
    """
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, server.base_url, str(out)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    if kill_at is None:
        _, err = child.communicate(timeout=300)
        if child.returncode != 0:
            raise RuntimeError(err.decode()[-2000:])
        return False
    ckpt = Path(str(out) + ".ckpt.jsonl")
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:
        if len(finished_passages(ckpt)) >= kill_at:
            time.sleep(jitter_s)
            break
        time.sleep(0.01)
    if child.poll() is not None:
        return False
    os.kill(child.pid, signal.SIGKILL)  # the child we started
    child.wait()
    return True


def kill_and_resume(workdir: Path, kills: int, seed: int = 0, delay_s: float = 0.15) -> dict[str, Any]:
    """``kills`` SIGKILLs at random times, each followed by a rerun; compare with an uninterrupted run."""
    rng = random.Random(seed)
    workdir.mkdir(parents=True, exist_ok=True)
    with CountingServer(delay_s=delay_s) as server:
        reference = workdir / "reference" / "openie.json"
        run_child(server, reference, None)
        server.per_request.clear()
        out = workdir / "killed" / "openie.json"
        ckpt = Path(str(out) + ".ckpt.jsonl")
        killed = repeated = attempts = 0
        while killed < kills and attempts < 4 * kills:
            attempts += 1
            before = finished_passages(ckpt)
            if len(before) >= 12:
                break
            seen = Counter(server.per_request)
            target = rng.randint(len(before), len(before) + 1)  # kill right after start-up, or one passage in
            killed += run_child(server, out, target, rng.uniform(0.0, delay_s))  # jitter: often mid-request
            for (task, passage), count in server.per_request.items():
                # a request for a passage finished before this run started counts as repeated
                if count > seen[(task, passage)] and any(_digest_key(workdir, i) == passage for i in before):
                    repeated += count - seen[(task, passage)]
        run_child(server, out, None)  # the final rerun finishes the rest
        identical = json.loads(out.read_text())["docs"] == json.loads(reference.read_text())["docs"]
        requests_per_passage = Counter(p for (_, p) in server.per_request.elements())
    return {"kills": killed, "identical": identical, "repeated_requests": repeated,
            "max_requests_per_passage_task": max(server.per_request.values(), default=0),
            "passages": len(requests_per_passage)}


_KEYS: dict[int, str] = {}


def _digest_key(workdir: Path, i: int) -> str:
    """The fake server's passage key of sample passage ``i`` (as its prompts show it)."""
    if not _KEYS:
        from hyperrag.data import sample_dataset
        from hyperrag.llm.openie import passage_string
        from hyperrag.llm.tasks.openie_hipporag import NamedEntityExtraction

        task = NamedEntityExtraction()
        for j, p in enumerate(sample_dataset().corpus.passages):
            body = {"messages": task.messages({"passage": passage_string(p)})}
            _KEYS[j] = passage_key(body)
    return _KEYS[i]
