"""``python -m hyperrag.index refresh``: a method's derived stages (HugRAG: hierarchy, summaries, gates) brought up
to date right after an insert / delete, ahead of retrieval; bad input is one line and exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hyperrag.data.jsonl import read_jsonl_corpus
from hyperrag.data.openie import read_openie
from hyperrag.index.kg_index import build_kg_directory, graph_settings
from hyperrag.index.update import insert_documents
from tests.conftest import REPO_ROOT
from tests.test_retrieve_index_dir import (
    NEW_OPENIE,
    NEW_PASSAGES,
    QUESTION,
    compose_retrieve,
    predictions,
    write_jsonl,
    write_new,
)

sys.path.insert(0, str(REPO_ROOT))
import retrieve

SAMPLE = REPO_ROOT / "hyperrag" / "sample_data"


def refresh(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYPERRAG_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "hyperrag.index", "refresh", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def overrides(tmp_path: Path) -> list[str]:
    return ["llm=none", "hardware=cpu", "tracking=none", f"cache_dir={tmp_path / 'cache'}",
            "method.retriever.hierarchy.context_window=40", "method.retriever.hierarchy.min_module_size=3"]


@pytest.mark.slow
def test_refresh_after_insert_then_retrieve(tmp_path, encoder):
    index = tmp_path / "index"
    build_kg_directory(index, read_jsonl_corpus(SAMPLE / "corpus.jsonl"), SAMPLE / "openie_handwritten.json", encoder,
                       graph_settings())
    proc = refresh(tmp_path, "--index", str(index), "--method", "hugrag", *overrides(tmp_path))
    assert proc.returncode == 0, proc.stderr
    first = json.loads(proc.stdout.strip().splitlines()[-1])
    assert first["hierarchy"] == "built" and first["passages"] == 12 and first["method"] == "hugrag"
    assert first["modules_recomputed"] == first["modules"] > 1 and first["modules_kept"] == 0

    new, new_openie = write_new(tmp_path)
    corpus = read_jsonl_corpus(new)
    insert_documents(index, corpus, read_openie(new_openie, corpus), encoder)

    proc = refresh(tmp_path, "--index", str(index), *overrides(tmp_path))  # --method defaults to hugrag
    assert proc.returncode == 0, proc.stderr
    second = json.loads(proc.stdout.strip().splitlines()[-1])
    assert second["hierarchy"] == "updated" and second["passages"] == 14
    assert second["modules_kept"] > 0 and 0 < second["modules_recomputed"] < second["modules"]
    assert second["touched_entities"] >= len({e for o in NEW_OPENIE for e in o["entities"]}) - 1

    # retrieval right after the refresh finds everything in place: the hierarchy is loaded, not rebuilt
    rows = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    full = write_jsonl(tmp_path / "full.jsonl", rows + NEW_PASSAGES)
    queries = write_jsonl(tmp_path / "q.jsonl", [{"id": "qn", "question": QUESTION, "gold_ids": ["n01"]}])
    cfg = compose_retrieve(tmp_path, "method=hugrag", f"index_dir={index}", "data=jsonl", f"data.corpus={full}",
                           f"data.queries={queries}", "method.retriever.hierarchy.context_window=40",
                           "method.retriever.hierarchy.min_module_size=3")
    retrieve.run(cfg)
    assert predictions(tmp_path)["qn"]["ranked_ids"][0] in {"n01", "n02"}
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["hierarchy_status"]["hierarchy"] == "loaded"


@pytest.mark.slow  # the default run stays under 10 minutes on 2 cores (BENCHMARKS, test suite)
def test_refresh_bad_input_is_one_line(tmp_path):
    proc = refresh(tmp_path, "--index", str(tmp_path / "nope"), "llm=none")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "index directory not found" in lines[0] and str(tmp_path / "nope") in lines[0]
    assert not proc.stdout.strip()
    (tmp_path / "idx").mkdir()
    proc = refresh(tmp_path, "--index", str(tmp_path / "idx"), "llm=no-such-llm")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: llm: unknown choice 'no-such-llm'; choices: gemini_flash_lite, gpt4, gpt5_nano, llama33_70b, local")
