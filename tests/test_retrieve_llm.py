"""retrieve.py with an LLM: the fact filter, the QA reader, EM/F1/JSR and the response cache.

``test_fake_llm_pipeline`` talks to the scripted fake server (a test double, real HTTP on loopback) to check
the logic; ``test_main_job_with_embedded_smollm2`` runs the README's main job with the real embedded model.
"""

import json
import random

import pytest

from hyperrag.data import sample_dataset
from tests.llm.fake_server import FakeOpenAIServer, Reply, schema_reply
from tests.test_retrieve_entry import compose_retrieve, retrieve

ANSWERS = {q.question: q.answers[0] for q in sample_dataset().queries}


def scripted(body: dict) -> Reply | str:
    """Fact filter keeps the first fact shown; the reader answers with the gold answer, citing P1."""
    spec = json.dumps(body.get("response_format", {}))
    prompt = body["messages"][-1]["content"]
    if "relevant_ids" in spec:
        return json.dumps({"relevant_ids": ["F1"]})
    if "supporting_ids" in spec:
        answer = next(a for q, a in ANSWERS.items() if q in prompt)
        return json.dumps({"answer": answer, "supporting_ids": ["P1", "P99"]})  # P99 was never shown
    return schema_reply(body, random.Random(0))


def test_fake_llm_pipeline(tmp_path):
    with FakeOpenAIServer(responder=scripted) as server:
        overrides = ["llm=openai_compatible", f"llm.base_url={server.base_url}", "llm.model=fake-model",
                     "llm.api_key_env=null", "llm.show_usage=false", "data.openie_source=file",
                     "reader_prompt=grounded"]  # the reader that cites passage IDs (hipporag2's own: hipporag_qa)
        cfg = compose_retrieve(tmp_path, *overrides)
        cfg.llm.api_key_env = None
        metrics = retrieve.run(cfg)
        assert server.stats["requests"] == 12  # 6 fact-filter calls + 6 answers
        rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
        assert all(len(r["details"]["seed_facts"]) == 1 for r in rows)  # the filter kept one fact each
        assert all(r["answer_ok"] and r["answer"] == r["answers"][0] for r in rows)
        assert all(r["supporting_ids"] == [r["ranked_ids"][0]] for r in rows)  # P99 dropped: never shown
        assert metrics["em"] == 100.0 and metrics["f1"] == 100.0
        assert metrics["jsr"] == pytest.approx(metrics["fcr@5"])
        # what it cost, per backend: the reader is the retrieval LLM (reader_llm=same), split off by its task
        usage = json.loads((tmp_path / "run" / "metrics.json").read_text())["llm_usage"]
        reader = usage["grounded_answer"]
        filt = next(v for k, v in usage.items() if k.startswith("fact_filter"))
        for backend, task in (("reader", reader), ("retrieval", filt)):
            assert metrics[f"cost.query.{backend}.llm_calls"] == metrics[f"cost.query.{backend}.llm_requests"] == 6
            assert metrics[f"cost.query.{backend}.prompt_tokens"] == task["prompt_tokens"] > 0
            assert metrics[f"cost.query.{backend}.completion_tokens"] == task["completion_tokens"] > 0
            assert metrics[f"cost.query.{backend}.prompt_tokens_per_1k_queries"] == pytest.approx(
                task["prompt_tokens"] * 1000 / 6, abs=1e-3)
        assert metrics["cost.query.llm_calls"] == 12 and metrics["cost.index.llm_calls"] == 0  # OpenIE from the file
        assert metrics["cost.query.seconds"] > 0 and metrics["cost.index.seconds"] >= metrics["index_seconds"]
        assert metrics["index_bytes"] > 0  # the knowledge-graph index directory
        # a rerun is answered from the response cache: no request, no new token; the cached replies' tokens kept
        server.reset()
        again = retrieve.run(compose_retrieve(tmp_path, *overrides))
        assert server.stats["requests"] == 0 and again["em"] == 100.0
        assert again["resumed_queries"] == 6 and again["cost.query.llm_calls"] == 0  # resumed: nothing asked
        fresh = retrieve.run(compose_retrieve(tmp_path, *overrides, "resume=false"))
        assert server.stats["requests"] == 0 and fresh["em"] == 100.0
        assert fresh["cost.query.llm_calls"] == fresh["cost.query.cache_hits"] == 12
        assert fresh["cost.query.llm_requests"] == fresh["cost.query.prompt_tokens"] == 0
        assert fresh["cost.query.cached_prompt_tokens"] == metrics["cost.query.prompt_tokens"]


@pytest.mark.llm
@pytest.mark.slow
def test_main_job_with_embedded_smollm2(tmp_path):
    """The README's main job: sample corpus, OpenIE by SmolLM2, HippoRAG 2 with fact filter, answers."""
    cfg = compose_retrieve(tmp_path, "llm=local", "llm.show_usage=false")
    metrics = retrieve.run(cfg)
    openie = list((tmp_path / "cache" / "openie").glob("openie_*.json"))
    assert len(openie) == 1
    docs = json.loads(openie[0].read_text())["docs"]
    assert len(docs) == 12 and sum(len(d["extracted_triples"]) for d in docs) > 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all("answer" in r for r in rows)
    assert metrics["answer_failures"] < 6 and {"em", "f1", "jsr", "recall@5"} <= set(metrics)


def test_a_served_model_other_than_the_presets_is_labelled_substituted(tmp_path):
    """llm=vllm (attached to the scripted fake server, a test double speaking the OpenAI protocol) serving
    Qwen2.5-7B-Instruct under a preset that names GPT-4o-mini: the run is 'substituted models', and metrics.json
    records the id each role used and the data it scored (sizes, digests)."""
    with FakeOpenAIServer(responder=scripted) as server:
        cfg = compose_retrieve(tmp_path, "method=dense", "llm=vllm", f"llm.base_url={server.base_url}",
                               "llm.model=Qwen/Qwen2.5-7B-Instruct", "llm.show_usage=false",
                               "reader_prompt=grounded", "paper_models={llm: gpt-4o-mini, reader: gpt-4o-mini}")
        metrics = retrieve.run(cfg)
    assert server.stats["requests"] >= 6  # the served model was asked (the reader, once per query at least)
    assert metrics["models"] == "substituted" and metrics["substituted_roles"] == ["llm", "reader"]
    assert metrics["models_used"] == {"llm": "Qwen/Qwen2.5-7B-Instruct", "reader": "Qwen/Qwen2.5-7B-Instruct",
                                      "embedder": "all-MiniLM-L6-v2"}
    assert metrics["data"]["queries"] == 6 and metrics["data"]["passages"] == 12
    assert len(metrics["data"]["queries_sha256"]) == 12
    from hyperrag.reporting.collect import load_run

    run = load_run(tmp_path / "run" / "metrics.json")
    assert "substituted models" in run.tags


@pytest.mark.slow  # a second retrieve run against the fake server
def test_the_presets_own_model_is_not_substituted(tmp_path):
    with FakeOpenAIServer(responder=scripted) as server:
        cfg = compose_retrieve(tmp_path, "method=dense", "llm=vllm", f"llm.base_url={server.base_url}",
                               "llm.model=gpt-4o-mini", "llm.show_usage=false", "reader_prompt=grounded",
                               "embedder=minilm",
                               "paper_models={llm: gpt-4o-mini, reader: gpt-4o-mini, embedder: all-MiniLM-L6-v2}")
        metrics = retrieve.run(cfg)
    assert "models" not in metrics and metrics["models_used"]["llm"] == "gpt-4o-mini"
