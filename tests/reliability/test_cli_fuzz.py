"""Fuzzing retrieve.py with generated bad corpus/query files: a clean run or one line + exit 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings

from tests.conftest import REPO_ROOT
from tests.reliability.cli_fuzz import run_retrieve
from tests.reliability.fuzz_inputs import jsonl_files

GOOD_QUERIES = b'{"id": "q", "question": "what is alpha?"}\n'
GOOD_CORPUS = b'{"id": "a", "text": "alpha"}\n{"id": "b", "text": "beta"}\n'


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(jsonl_files())
def test_cli_with_generated_corpus(data):
    outcome, text = run_retrieve(data, GOOD_QUERIES)
    assert outcome != "traceback", text


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(jsonl_files(("id", "question", "answers", "gold_ids")))
def test_cli_with_generated_queries(data):
    outcome, text = run_retrieve(GOOD_CORPUS, data)
    assert outcome != "traceback", text


@pytest.mark.slow
def test_cli_subprocess_bad_encoding_exit_2(tmp_path):
    (tmp_path / "c.jsonl").write_bytes(b'\xef\xbb\xbf{"id": "a", "text": "x"}\r\n{"id": "b", "text": "\xff"}\r\n')
    (tmp_path / "q.jsonl").write_bytes(GOOD_QUERIES)
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "retrieve.py"), f"out={tmp_path / 'run'}",
                           f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", "llm=none", "tracking=none",
                           "method=bm25", "data=jsonl", f"data.corpus={tmp_path / 'c.jsonl'}",
                           f"data.queries={tmp_path / 'q.jsonl'}"], check=False, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "c.jsonl:2: not valid UTF-8" in proc.stderr
