"""HyperRAG retriever: train-or-load the ball, hyperbolic top-k, variants, multi-step with the fake LLM."""

import json
from dataclasses import replace

import pytest
import torch

from hyperrag.config import method_settings
from tests.conftest import requires_musique
from tests.test_retrieve_entry import compose_retrieve, retrieve


def _rows(tmp_path):
    return [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("graph", ["explicit", "implicit", "fused"])
def test_sample_trains_then_loads(tmp_path, graph):
    over = ["method=hyperrag", f"method.graph={graph}", f"method.retriever.models_dir={tmp_path / 'models'}",
            "tracking=none", "method.retriever.train.max_epochs=3"]
    m1 = retrieve.run(compose_retrieve(tmp_path, *over))
    ckpts = list((tmp_path / "models" / "hyperrag").glob(f"sample-{graph}-*/model.ckpt"))
    assert len(ckpts) == 1
    rows = _rows(tmp_path)
    assert all(len(r["ranked_ids"]) == 10 and len(set(r["ranked_ids"])) == 10 for r in rows)
    assert all(r["scores"] == sorted(r["scores"], reverse=True) for r in rows)  # -distance, nearest first
    m2 = retrieve.run(compose_retrieve(tmp_path, *over))  # loads the checkpoint: same numbers
    assert m2["recall@5"] == m1["recall@5"]
    assert len(list((tmp_path / "models" / "hyperrag").glob("*/model.ckpt"))) == 1


def test_ranking_is_hyperbolic_distance(tmp_path, encoder):
    from hyperrag.data import sample_dataset
    from hyperrag.hyperbolic import pairwise_poincare_distance
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever

    ds = sample_dataset()
    settings = method_settings("hyperrag", graph="fused", models_dir=str(tmp_path), index_root=str(tmp_path),
                               train={"max_epochs": 2}, model={"anchor_weight": 1.0, "init_radius": 1.0})
    r = HyperRAGRetriever(settings, encoder=encoder, device="cpu")
    r.index(ds)
    assert r.info["trained_now"] and r.info["query_nodes"] == len(ds.queries)
    qs = [q.question for q in ds.queries]
    out = r.retrieve(qs, 5)
    p = len(ds.corpus)
    pts = r.model.points[:p]
    # seen questions are ranked from their trained query nodes (rows P.. of the ball), in question order
    assert r.graph.questions == qs
    d = pairwise_poincare_distance(r.model.points[p:].double(), pts.double())
    assert torch.equal(out.indices, torch.topk(-d, 5).indices)
    assert torch.allclose(-out.scores.double(), torch.topk(-d, 5).values.neg(), atol=1e-4)
    # unseen questions (and query_position=projected): the projected sentence embedding
    unseen = ["Which tower is in Paris?"]
    d_new = pairwise_poincare_distance(r.model.embed(encoder.encode(unseen)).double(), pts.double())
    assert torch.equal(r.retrieve(unseen, 5).indices, torch.topk(-d_new, 5).indices)
    r.settings = replace(r.settings, query_position="projected")
    d_proj = pairwise_poincare_distance(r.model.embed(encoder.encode(qs)).double(), pts.double())
    assert torch.equal(r.retrieve(qs, 5).indices, torch.topk(-d_proj, 5).indices)


def test_multi_step_with_fake_llm(tmp_path):
    from tests.llm.fake_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:  # schema-valid synthetic replies (a test double, real HTTP)
        over = ["method=hyperrag", f"method.retriever.models_dir={tmp_path / 'models'}", "tracking=none",
                "llm=openai_compatible", f"llm.base_url={server.base_url}", "llm.model=fake-model",
                "llm.api_key_env=null", "llm.show_usage=false", "data.openie_source=file", "answer_top_n=0",
                "method.retriever.train.max_epochs=2"]
        cfg = compose_retrieve(tmp_path, *over)
        cfg.llm.api_key_env = None
        retrieve.run(cfg)
        assert server.stats["requests"] > 0
    rows = _rows(tmp_path)
    assert all("sub_questions" in r["details"] for r in rows)
    assert all(len(r["ranked_ids"]) == 10 and len(set(r["ranked_ids"])) == 10 for r in rows)
    meta = json.loads(next((tmp_path / "models" / "hyperrag").glob("*/meta.json")).read_text())
    assert meta["graph"] == "fused"


@pytest.mark.slow
@requires_musique
def test_musique_hyperrag_not_below_dense(tmp_path):
    """The trained structure adds recall: the fused ball (default settings, llm=none) beats dense on R@5 and
    full-chain@5 (the issue's bar is "at least as good"; the feedback round + trained query nodes add more)."""
    import os

    over = ["data=musique", "tracking=none", "answer_top_n=0",
            f"cache_dir={os.environ.get('HYPERRAG_CACHE', os.path.expanduser('~/.cache/hyperrag'))}"]
    dense = retrieve.run(compose_retrieve(tmp_path, "method=dense", *over))
    hyper = retrieve.run(compose_retrieve(tmp_path, "method=hyperrag", "method.graph=fused",
                                             f"method.retriever.models_dir={tmp_path / 'm'}", *over))
    assert hyper["recall@5"] >= dense["recall@5"] + 3.0
    assert hyper["fcr@5"] >= dense["fcr@5"] + 3.0
