"""A dead LLM endpoint, or an LLM stage whose every call fails, stops a run with one line and exit code 2.

The endpoint is checked (``GET <base_url>/models``) when the LLM starts, before any work; a stage whose every
call fails (here OpenIE, answered by a scripted TEST DOUBLE server that returns HTTP 500 to every chat call)
stops instead of building a graph on nothing.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.llm.fake_server import FakeOpenAIServer, Faults


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_entry(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          check=False, env=None)
    return proc, time.perf_counter() - t0


def assert_one_line(proc: subprocess.CompletedProcess, *expected: str) -> str:
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, proc.stderr[-3000:]
    for text in expected:
        assert text in errors[0], errors[0]
    return errors[0]


def test_retrieve_with_an_unreachable_endpoint_stops_before_any_work(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    proc, _ = run_entry(tmp_path, str(REPO_ROOT / "retrieve.py"), "llm=openai_compatible",
                              f"llm.base_url={url}", "method=hipporag2", f"out={tmp_path / 'run'}",
                              f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", "tracking=none")
    assert_one_line(proc, f"{url}/models", "llm.base_url", "Connection refused")
    assert not (tmp_path / "cache" / "openie").exists()  # stopped before the first OpenIE call
    assert not (tmp_path / "run" / "predictions.jsonl").exists()


@pytest.mark.slow
def test_train_with_an_unreachable_task_llm_is_one_line(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    # task=ppo takes a task LLM (task.llm: its actions and the hallucination reward)
    proc, _ = run_entry(tmp_path, str(REPO_ROOT / "train.py"), "task=ppo", "data=sample",
                        "+llm@task.llm=openai_compatible", f"task.llm.base_url={url}", "task.llm.model=m",
                        "task.llm.api_key_env=null", "logger=none", f"out={tmp_path / 'out'}",
                        f"models_dir={tmp_path / 'models'}", "hardware=cpu")
    assert_one_line(proc, f"{url}/models", "Connection refused")
    assert not (tmp_path / "models").exists()


@pytest.mark.slow
def test_index_refresh_with_an_unreachable_endpoint_is_one_line(tmp_path):
    sample = REPO_ROOT / "hyperrag" / "sample_data"
    built, _ = run_entry(tmp_path, "-m", "hyperrag.index", "build", "--index", str(tmp_path / "idx"), "--corpus",
                         str(sample / "corpus.jsonl"), "--openie", str(sample / "openie_handwritten.json"))
    assert built.returncode == 0, built.stderr[-2000:]
    url = f"http://127.0.0.1:{closed_port()}/v1"
    proc, _ = run_entry(tmp_path, "-m", "hyperrag.index", "refresh", "--index", str(tmp_path / "idx"), "--method",
                        "hugrag", "llm=openai_compatible", f"llm.base_url={url}", "hardware=cpu",
                        f"cache_dir={tmp_path / 'cache'}")
    assert_one_line(proc, f"{url}/models", "Connection refused")
    assert not (tmp_path / "idx" / "derived").exists()  # nothing of the method's stages was started


@pytest.mark.slow
def test_openie_stage_whose_every_call_fails_stops_with_one_line(tmp_path):
    with FakeOpenAIServer(faults=Faults(http500=1.0)) as server:  # TEST DOUBLE: HTTP 500 to every chat call
        proc, _ = run_entry(tmp_path, str(REPO_ROOT / "retrieve.py"), "llm=openai_compatible",
                            f"llm.base_url={server.base_url}", "llm.model=fake-model", "llm.api_key_env=null",
                            "llm.client.max_retries=0", "method=hipporag2", "data=sample",
                            f"out={tmp_path / 'run'}", f"cache_dir={tmp_path / 'cache'}", "hardware=cpu",
                            "tracking=none")
        chat_calls = server.stats["requests"]
    line = assert_one_line(proc, "OpenIE", "every LLM call failed", "12 passages", server.base_url)
    assert "HTTP 500" in line or "http_5xx" in line.lower(), line
    assert chat_calls == 12  # one NER call per passage, no retries; the stage stopped before any graph
    assert not (tmp_path / "run" / "predictions.jsonl").exists()
    assert not list((tmp_path / "cache" / "openie").glob("openie_*.json"))  # no file of empty extractions
