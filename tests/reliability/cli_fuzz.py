"""Run ``retrieve.py`` in-process (Hydra compose + the decorated main) on generated bad input files.

Outcome per input: ``ok`` (ran), ``exit2`` (one-line error, exit code 2) or ``traceback`` (anything else).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from tests.conftest import REPO_ROOT

if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def run_retrieve(corpus: bytes, queries: bytes, method: str = "bm25") -> tuple[str, str]:
    """``(outcome, stderr)`` of one retrieve.py run on these file contents."""
    from hydra import compose, initialize_config_dir

    import retrieve

    folder = Path(tempfile.mkdtemp(prefix="cli-fuzz-"))
    try:
        (folder / "corpus.jsonl").write_bytes(corpus)
        (folder / "queries.jsonl").write_bytes(queries)
        with initialize_config_dir(config_dir=str(REPO_ROOT / "hyperrag" / "conf"), version_base="1.3"):
            cfg = compose("retrieve", overrides=[
                f"out={folder / 'run'}", f"cache_dir={folder / 'cache'}", "hardware=cpu", "llm=none",
                "tracking=none", f"method={method}", "data=jsonl", f"data.corpus={folder / 'corpus.jsonl'}",
                f"data.queries={folder / 'queries.jsonl'}"])
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                retrieve.main(cfg)
        except SystemExit as exc:
            text = err.getvalue()
            ok = exc.code == 2 and text.startswith("error: ") and text.count("\n") == 1
            return ("exit2" if ok else "traceback"), text
        except Exception:  # noqa: BLE001 - the point: count anything that is not a clean exit
            return "traceback", traceback.format_exc()
        return "ok", err.getvalue()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
