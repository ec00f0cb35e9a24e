"""A quiet console: progress bars, warnings and the final tables by default; per-request lines only with
``verbose=true`` (hyperrag.utils.console, called by retrieve.py / train.py / evaluate.py / python -m hyperrag.index)."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys

import pytest

from hyperrag.utils.console import configure_console
from tests.conftest import REPO_ROOT


@pytest.fixture
def console():
    """A root console handler like Hydra's (a plain StreamHandler at INFO) writing into a buffer; removed afterwards,
    with the loggers' levels restored."""
    root = logging.getLogger()
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.INFO)
    old_root_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    saved = {n: logging.getLogger(n).level for n in ("httpx", "lightning")}
    yield buffer
    root.removeHandler(handler)
    root.setLevel(old_root_level)
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def test_quiet_console_hides_per_request_and_info_lines(console):
    import lightning  # noqa: F401 - installs its own console handler on the "lightning" logger

    configure_console(verbose=False)
    assert not [h for h in logging.getLogger("lightning").handlers if type(h) is logging.StreamHandler]
    logging.getLogger("httpx").info('HTTP Request: POST http://127.0.0.1:1/v1/chat/completions "HTTP/1.1 200 OK"')
    logging.getLogger("hyperrag.index.kg_index").info("loaded index x")
    logging.getLogger("lightning.pytorch.utilities.rank_zero").info("GPU available: False, used: False")
    logging.getLogger("hyperrag.runners.batch_retrieval").warning("configured LLM steps that did not run: answer 6")
    printed = console.getvalue()
    assert "HTTP Request" not in printed and "loaded index" not in printed and "GPU available" not in printed
    assert "configured LLM steps that did not run" in printed


def test_verbose_console_shows_every_line_once(console):
    import lightning  # noqa: F401

    configure_console(verbose=True)
    logging.getLogger("httpx").info('HTTP Request: POST http://127.0.0.1:1/v1/embeddings "HTTP/1.1 200 OK"')
    logging.getLogger("lightning.pytorch.utilities.rank_zero").info("GPU available: False, used: False")
    printed = console.getvalue()
    assert "HTTP Request: POST" in printed and printed.count("GPU available") == 1


def _main_job(tmp_path, *overrides: str) -> tuple[str, dict]:
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # tracking=none uses no W&B; with WANDB_MODE=offline (as .ci/run sets it) transformers >= 5.2x prints its own
    # "[INFO] Running in WANDB offline mode" when imported, a line this test does not judge our console by
    env.pop("WANDB_MODE", None)
    proc = subprocess.run([sys.executable, "retrieve.py", f"out={out}", "tracking=none", "limit_queries=1",
                           f"llm.cache_path={tmp_path / 'llm.sqlite'}", *overrides],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout + proc.stderr, json.loads((out / "metrics.json").read_text())


@pytest.mark.llm
@pytest.mark.slow
def test_the_main_job_prints_no_per_request_lines(tmp_path):
    """``python retrieve.py`` (SmolLM2 by default) with a fresh response cache, so requests really go out."""
    output, record = _main_job(tmp_path / "quiet")
    assert record["llm_usage"]["total"]["requests"] > 0
    assert "HTTP Request" not in output and "[INFO]" not in output and "INFO:" not in output
    assert "LLM usage" in output and "recall@5" in output and "predictions and metrics in" in output
    log = next((tmp_path / "quiet" / "run").glob("*.log")).read_text()
    assert "GPU available" in log and log.count("GPU available") == 1  # in the log file, once
    assert "HTTP Request" not in log
    verbose, record = _main_job(tmp_path / "verbose", "verbose=true")
    assert record["llm_usage"]["total"]["requests"] > 0 and "HTTP Request: POST" in verbose
