"""CDF-RAG retriever: dual-path ranking, refinement policy pick-up, LLM wiring, retrieve.py entry."""

import json
import random
import sys

import lightning
import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.errors import InputError
from hyperrag.llm.base import NoLLM
from hyperrag.refinement.ppo import PPOPolicy, policy_compatibility
from hyperrag.retrievers.cdfrag import CDFRAGRetriever, resolve_trained_checkpoint
from hyperrag.utils.artifacts import ArtifactRecord, check_unseen, read_record, write_record
from tests.causal.corpus import causal_dataset
from tests.causal.llm_double import fake_llm, task_of
from tests.conftest import MUSIQUE_DIR, REPO_ROOT, requires_musique
from tests.llm.fake_server import FakeOpenAIServer, schema_reply


def make(encoder, tmp_path, llm=None, **kw) -> CDFRAGRetriever:
    kw.setdefault("policy", None)
    kw.setdefault("classifier", None)
    settings = method_settings("cdfrag", index_root=str(tmp_path / "idx"), models_dir=str(tmp_path / "models"),
                               causal={"alias_threshold": 0.6}, **kw)
    return CDFRAGRetriever(settings, encoder=encoder, llm=llm or NoLLM(), device="cpu")


def ranks(r: CDFRAGRetriever, ds) -> dict[str, list[int]]:
    out = r.retrieve([q.question for q in ds.queries], 12)
    ids = [[ds.corpus[i].id for i in row] for row in out.indices.tolist()]
    return {q.id: [row.index(g) for g in q.gold_ids] for q, row in zip(ds.queries, ids)}


def test_causal_paths_lift_the_passages_on_the_chain(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    dense_only = make(encoder, tmp_path, fixed_action="none", path_weight=0.0)
    dense_only.index(ds)
    dual = make(encoder, tmp_path, fixed_action="none", path_weight=0.5)
    dual.index(ds)
    before, after = ranks(dense_only, ds), ranks(dual, ds)
    assert before["k2"] == [1] and after["k2"] == [0]  # famine -> migration -> Maren grew: c04 rises to the top
    assert before["k3"] == [1] and after["k3"] == [0]  # corrosion -> collapse -> road closed
    assert all(sum(after[q]) <= sum(before[q]) for q in before)
    out = dual.retrieve(["What made the port city of Maren grow rapidly?"], 5)
    d = out.details[0]
    assert d["action"] == "none" and d["queries"] == ["What made the port city of Maren grow rapidly?"]
    chains = [p["chain"] for p in d["causal_paths"]]
    assert "The famine of 1991 → mass migration to the coast → the migration → the port city of Maren grew rapidly" \
        in chains
    edge = d["causal_paths"][0]["edges"][0]
    assert {"cause", "effect", "passage_id", "sentence", "weight"} <= set(edge)
    assert d["causal_depth"] == 2 and d["causal_edge_ids"] and d["refinement_similarity"] == 1.0
    info = dual.describe()
    assert info["causal_graph"]["edges"] == 14 and info["fixed_action"] == "none" and info["policy"] is None


def test_fixed_actions_refine_the_query(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    r = make(encoder, tmp_path, fixed_action="expand")
    r.index(ds)
    q = "Why was the coastal road near Maren closed?"
    out = r.retrieve_with_actions([q, q, q], ["expand", "simplify", "decompose"], 5)
    expand, simplify, decompose = out.details
    assert expand["queries"][0].startswith(q) and len(expand["queries"][0]) > len(q)
    assert simplify["queries"] == ["coastal road near Maren closed"]
    assert decompose["queries"][-1] == q
    assert 0.0 < expand["refinement_similarity"] < 1.0
    assert r.describe()["actions_taken"] == {"expand": 1, "simplify": 1, "decompose": 1}
    with pytest.raises(ValueError):
        make(encoder, tmp_path, fixed_action="paraphrase")


def save_policy(path, favour: str, dataset: str = "causal_toy", query_ids=(), compatibility: str = "") -> None:
    policy = PPOPolicy(state_dim=384, hidden=8)
    with torch.no_grad():
        policy.net.policy.bias[policy.actions.index(favour)] = 5.0
    path.parent.mkdir(parents=True)
    torch.save({"state_dict": policy.state_dict(), "hyper_parameters": dict(policy.hparams),
                "pytorch-lightning_version": lightning.__version__, "history": []}, path)
    write_record(path.parent, ArtifactRecord("ppo", dataset, tuple(query_ids), compatibility))


def test_trained_policy_is_picked_up_from_models(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    r = make(encoder, tmp_path, policy="auto", fixed_action="expand")
    save_policy(tmp_path / "models" / "ppo" / "causal_toy-0000000000" / "model.ckpt", "decompose",
                compatibility=policy_compatibility(r.settings, encoder))
    r.index(ds)
    out = r.retrieve(["Why was the coastal road near Maren closed?"], 5)
    d = out.details[0]
    assert d["action"] == "decompose" and d["policy_probs"]["decompose"] > 0.9
    assert r.describe()["policy"].endswith("model.ckpt") and r.describe()["fixed_action"] is None


def test_resolve_trained_checkpoint_picks_only_records_of_this_dataset_that_saw_no_scored_query(tmp_path):
    models = tmp_path / "models"
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique") is None
    assert resolve_trained_checkpoint(None, models, "ppo", "musique") is None
    assert resolve_trained_checkpoint("none", models, "ppo", "x") is None
    bare = models / "ppo" / "musique-0" / "model.ckpt"  # saved before artifact records: never picked
    bare.parent.mkdir(parents=True)
    bare.write_bytes(b"x")
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique") is None
    save_policy(models / "ppo" / "sample-1" / "model.ckpt", "expand", dataset="sample")
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique") is None  # another dataset's: never
    save_policy(models / "ppo" / "musique-2" / "model.ckpt", "expand", dataset="musique", query_ids=["q1", "q2"],
                compatibility="k")
    own = models / "ppo" / "musique-2" / "model.ckpt"
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique", "k", unseen=["q3"]) == own
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique", "other settings") is None
    assert resolve_trained_checkpoint("auto", models, "ppo", "musique", "k", unseen=["q2", "q3"]) is None
    assert resolve_trained_checkpoint(str(bare), models, "ppo", "musique") == bare  # explicit: checked later
    with pytest.raises(InputError):
        resolve_trained_checkpoint(str(tmp_path / "missing.ckpt"), models, "ppo", "musique")


def test_an_artifact_never_scores_the_queries_it_trained_on(tmp_path):
    models = tmp_path / "models"
    save_policy(models / "ppo" / "musique-2" / "model.ckpt", "expand", dataset="musique", query_ids=["q1", "q2"])
    path = models / "ppo" / "musique-2" / "model.ckpt"
    record = read_record(path)
    assert not check_unseen([("method.retriever.policy", record, str(path))], ["q3", "q4"])
    with pytest.raises(InputError, match="trained on 1 of the 2 queries being scored"):
        check_unseen([("method.retriever.policy", record, str(path))], ["q2", "q3"])
    with pytest.raises(InputError, match="has no artifact.json"):
        check_unseen([("method.retriever.policy", None, "old/model.ckpt")], ["q1"])
    transductive = ArtifactRecord("hyperrag", "musique", ("q1",), transductive=True)
    assert check_unseen([("ball", transductive, "ball.ckpt")], ["q1"])  # allowed, and said


def test_llm_wiring_verification_refinement_generation(tmp_path, encoder):
    """Every LLM stage runs against the fake server (schema-valid filler replies) and is recorded."""
    ds = causal_dataset(tmp_path)
    with FakeOpenAIServer(responder=lambda body: schema_reply(body, random.Random(0))) as server, \
            fake_llm(server, tmp_path) as llm:
        r = make(encoder, tmp_path, llm=llm, fixed_action="decompose", generation={"max_rounds": 1})
        r.index(ds)
        verified = sum(task_of(b) == "causal_pair_verification" for b in server.requests)
        out = r.retrieve(["What made the port city of Maren grow rapidly?", "Why was the coastal road closed?"], 5)
        tasks = {task_of(b) for b in server.requests}
    assert verified == 14 and r.causal_graph.stats["llm_verified"] == 14  # 10 connective + 4 OpenIE pairs
    assert {"query_refinement", "causal_context_rewrite", "grounded_answer", "claim_extraction",
            "claim_support"} <= tasks
    for d in out.details:
        assert d["refinement_source"] == "llm" and d["action"] == "decompose"
        gen = d["generation"]
        assert gen["steps"][0]["step"] == "rewrite_context" and d["answer"] == gen["answer"]
        assert {"causal_consistency", "claim_check"} <= {s["step"] for s in gen["steps"]}
    assert r.describe()["refinement_llm_calls"] == 2 and r.describe()["generation"] is True


def test_retrieve_entry_method_cdfrag(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO_ROOT))
    from tests.test_retrieve_entry import compose_retrieve, retrieve

    monkeypatch.setenv("HYPERRAG_MODELS", str(tmp_path / "no-models"))
    cfg = compose_retrieve(tmp_path, "method=cdfrag")
    metrics = retrieve.run(cfg)
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["details"]["action"] == "expand" for r in rows)
    assert metrics["recall@10"] == 100.0 and metrics["recall@5"] >= 60.0
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["method"] == "cdfrag" and "causal_graph" in saved and saved["policy"] is None
    from hyperrag.eval.causal import summarize_run

    summary = summarize_run(tmp_path / "run")
    assert summary["queries"] == 6 and summary["context_precision"] > 0 and summary["answer_f1"] is None
    assert 0 < summary["semantic_refinement_score"] <= 100


@pytest.mark.slow
@requires_musique
def test_musique_beats_dense(tmp_path):
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.retrieval import retrieval_metrics

    ds = musique_dataset(MUSIQUE_DIR)
    settings = method_settings("cdfrag", policy=None, classifier=None, fixed_action="expand", index_root=str(tmp_path))
    r = CDFRAGRetriever(settings, encoder=TextEncoder(show_progress=False),  # the user cache: cold once, then warm
                        llm=NoLLM(), device="cpu")
    r.index(ds)
    out = r.retrieve([q.question for q in ds.queries], 10)
    m = retrieval_metrics([[ds.corpus[i].id for i in row] for row in out.indices.tolist()],
                          [q.gold_ids for q in ds.queries], (5,))
    assert m["recall@5"] > 62.0 and m["fcr@5"] > 40.0  # dense MiniLM: 58.7 / 31.4
