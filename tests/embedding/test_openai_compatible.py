"""The OpenAI-compatible embedder: against a real llama.cpp server (llama-cpp-python, the bundled SmolLM2 GGUF)
and, for batching, ordering, retries and faults, against the scripted test server (``tests/llm/fake_server.py``,
a TEST DOUBLE whose vectors are hashes of the text)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from hyperrag.embedding import EmbeddingEndpointError, OpenAICompatibleEmbedder
from hyperrag.errors import InputError
from tests.llm.fake_server import FakeOpenAIServer, Reply, hash_vector

FAST = {"concurrency": 4, "timeout_s": 5.0, "connect_timeout_s": 1.0, "max_retries": 2, "backoff_initial_s": 0.01,
        "backoff_max_s": 0.02}
TEXTS = ["Marie Curie was born in Warsaw.", "The Vistula flows north through Krakow.", "Paris is the capital of France."]


def unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


# ---- against the scripted test server ------------------------------------------------------------------------
@pytest.fixture
def scripted():
    with FakeOpenAIServer() as server:
        yield server


def embedder(server: FakeOpenAIServer, tmp_path, **kw) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(server.base_url, "fake-embed", cache_dir=tmp_path, show_progress=False,
                                    client=FAST, **kw)


def test_batches_order_and_cache(scripted, tmp_path):
    texts = [f"text {i}" for i in range(7)] + ["text 3"]  # one repeat: 7 distinct texts
    e = embedder(scripted, tmp_path, batch_size=3)
    out = e.encode(texts)
    assert out.shape == (8, 8) and e.requests == 3 and e.encoded_count == 7  # ceil(7 / 3) requests
    expected = np.stack([unit(hash_vector(t, 8)) for t in texts])
    assert np.allclose(out.numpy(), expected, atol=1e-6)  # reversed replies put back in input order, normalised
    assert sorted(len(b["input"]) for b in scripted.requests) == [1, 3, 3]  # concurrent: any arrival order
    again = embedder(scripted, tmp_path, batch_size=3)  # a new process: the sqlite cache answers
    assert torch.equal(again.encode(texts), out) and again.requests == 0 and scripted.stats["requests"] == 3


def test_identity_names_endpoint_model_and_settings(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_EMBED_KEY", "sekret-value")
    a = embedder(scripted, tmp_path)
    b = embedder(scripted, tmp_path, dimensions=4, api_key_env="TEST_EMBED_KEY")
    assert a.model_key != b.model_key and a.model_key.startswith("fake-embed-")
    assert b.encode(["x"]).shape == (1, 4) and scripted.requests[-1]["dimensions"] == 4
    assert b.spec()["dimensions"] == 4 and "sekret" not in str(b.spec())  # the variable's name, never the key


def test_transient_errors_are_retried(scripted, tmp_path):
    scripted.enqueue(Reply(status=500, body='{"error": "busy"}'), Reply(status=429, body='{"error": "slow down"}'))
    out = embedder(scripted, tmp_path).encode(["a"])
    assert scripted.stats["embedding_requests"] == 3 and np.allclose(out[0].numpy(), unit(hash_vector("a", 8)))


@pytest.mark.parametrize(("reply", "message"), [
    (Reply(status=400, body='{"error": "bad model"}'), "failed after 1 attempt"),  # 4xx: not retried
    (Reply(body='{"data": []}'), "returned 0 vectors for 1 inputs"),
    (Reply(body='{"object": "list"}'), "off-protocol"),
])
def test_failures_stop_with_one_line_naming_the_endpoint(scripted, tmp_path, reply, message):
    scripted.enqueue(reply)
    with pytest.raises(EmbeddingEndpointError, match=message) as err:
        embedder(scripted, tmp_path).encode(["a"])
    assert scripted.base_url in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, InputError)  # entry points: one line, exit code 2


def test_unreachable_endpoint(tmp_path):
    from hyperrag.llm.server import free_port

    e = OpenAICompatibleEmbedder(f"http://127.0.0.1:{free_port()}/v1", "m", cache_dir=tmp_path, show_progress=False,
                                 client={**FAST, "max_retries": 0})
    with pytest.raises(EmbeddingEndpointError, match="connection"):
        e.encode(["a"])


@pytest.mark.parametrize("method", ["dense", "hipporag2", "catrag", "hugrag", "hyperrag", "cdfrag"])
def test_every_method_refuses_an_index_embedded_by_another_embedder(scripted, tmp_path, encoder, method):
    """An index built with the endpoint's embeddings records its identity; MiniLM over it stops, the same for all."""
    import json

    from hydra.utils import get_class

    from hyperrag.config import method_settings
    from hyperrag.data import sample_dataset
    from hyperrag.index.kg_index import build_kg_directory, graph_settings
    from hyperrag.index.passages import dataset_for_index

    ds = sample_dataset()
    e = embedder(scripted, tmp_path)
    kg = build_kg_directory(tmp_path / "idx", ds.corpus, ds.openie_path, e, graph_settings())
    manifest = json.loads((kg.directory / "manifest.json").read_text())
    assert manifest["inputs"]["encoder"] == e.model_key and manifest["inputs"]["encoder_model"] == "fake-embed"
    settings = method_settings(method) if method == "dense" else method_settings(method, index_root=str(tmp_path))
    retriever = get_class(settings.retriever)(settings, encoder=encoder, index_dir=str(kg.directory), device="cpu")
    with pytest.raises(InputError, match=f"index was embedded with '{e.model_key}', the configured embedder is"):
        retriever.index(dataset_for_index(ds, kg.directory))


def test_hydra_config_builds_the_embedder():
    from hydra.utils import instantiate

    from hyperrag.config import compose_config
    from hyperrag.runners.run_settings import check_retrieve_config

    cfg = compose_config("retrieve", ["embedder=openai_compatible", "embedder.base_url=http://127.0.0.1:1/v1",
                                      "embedder.model=m", "llm=none", "tracking=none"])
    check_retrieve_config(cfg)
    e = instantiate(cfg.embedder)
    assert isinstance(e, OpenAICompatibleEmbedder) and e.base_url == "http://127.0.0.1:1/v1"
    bad = compose_config("retrieve", ["embedder=openai_compatible", "embedder.token_pooling=max", "llm=none"])
    with pytest.raises(InputError, match="embedder.token_pooling"):
        check_retrieve_config(bad)


# ---- against a real llama.cpp server ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def llama_embedding_server():
    """llama-cpp-python's OpenAI-compatible server with ``--embedding true`` over the bundled SmolLM2 GGUF."""
    pytest.importorskip("llama_cpp")
    from hyperrag.llm.backends import find_smollm2_gguf
    from hyperrag.llm.server import ManagedServer, free_port

    gguf = find_smollm2_gguf()
    port = free_port()
    server = ManagedServer([sys.executable, "-m", "hyperrag.llm.llama_server", "--model", str(gguf), "--model_alias",
                            "smollm2-embed", "--host", "127.0.0.1", "--port", str(port), "--embedding", "true",
                            "--n_ctx", "2048", "--n_threads", "1", "--verbose", "False"],
                           host="127.0.0.1", port=port, name="llama-cpp-embeddings")
    server.start()
    yield server, gguf
    server.stop()


@pytest.mark.llm
def test_real_llama_cpp_server_embeddings(llama_embedding_server, tmp_path):
    """SmolLM2 returns one vector per token (no pooling type in the GGUF): mean-pooled here, they equal llama.cpp's
    own mean pooling in-process. llama-cpp-python's server mis-embeds every input after the first of a multi-input
    request for such models, so this endpoint is used with batch_size 1 (requests still go out concurrently)."""
    import llama_cpp

    from hyperrag.llm.llama_server import disable_extra_buffer_types

    disable_extra_buffer_types()  # as the server runs it (see hyperrag/llm/llama_server.py)
    server, gguf = llama_embedding_server
    e = OpenAICompatibleEmbedder(server.base_url, "smollm2-embed", batch_size=1, cache_dir=tmp_path,
                                 show_progress=False, client={"concurrency": 2, "timeout_s": 120, "connect_timeout_s": 10,
                                                              "max_retries": 4, "backoff_initial_s": 0.5,
                                                              "backoff_max_s": 8})
    out = e.encode(TEXTS)
    assert out.shape == (3, 576) and e.requests == 3 and e.dim == 576
    assert torch.allclose(out.norm(dim=1), torch.ones(3), atol=1e-5)
    model = llama_cpp.Llama(str(gguf), embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN, n_ctx=2048,
                            verbose=False)
    reference = torch.tensor([model.embed(t, normalize=True) for t in TEXTS])
    assert torch.allclose((out * reference).sum(1), torch.ones(3), atol=1e-4)
    assert torch.equal(e.encode(TEXTS[::-1]), out.flip(0)) and e.requests == 3  # cached


@pytest.mark.llm
@pytest.mark.slow
def test_retrieve_with_the_real_embedding_server(llama_embedding_server, tmp_path):
    """The main job over the sample with dense retrieval on the endpoint's embeddings (no LLM)."""
    import retrieve
    from hyperrag.config import compose_config

    server, _ = llama_embedding_server
    cfg = compose_config("retrieve", [f"out={tmp_path / 'run'}", f"cache_dir={tmp_path / 'cache'}", "hardware=cpu",
                                      "llm=none", "tracking=none", "method=dense", "embedder=openai_compatible",
                                      f"embedder.base_url={server.base_url}", "embedder.model=smollm2-embed",
                                      "embedder.batch_size=1", "embedder.client.concurrency=2"])
    metrics = retrieve.run(cfg)
    assert metrics["queries"] == 6 and 0.0 <= metrics["recall@5"] <= 100.0
    cached = list((tmp_path / "cache" / "embeddings").glob("smollm2-embed-*.sqlite"))
    assert len(cached) == 1  # every passage and question embedded through the endpoint, cached under its identity
