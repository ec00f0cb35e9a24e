import json
import random

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.retrievers.catrag import CatRAGRetriever
from hyperrag.retrievers.edge_scoring import score_to_multiplier
from tests.llm.fake_server import FakeOpenAIServer, Reply, schema_reply


@pytest.mark.parametrize("score, mult", [(0, 0.0), (3, 0.0), (4, 0.2), (5, 0.25), (6, 0.3), (7, 2.0), (8, 2.5),
                                         (9, 3.0), (10, 5.0)])
def test_score_map(score, mult):
    assert score_to_multiplier(score) == pytest.approx(mult)


def scripted(body: dict) -> Reply | str:
    """Neighbour scoring: N1 → 10, N2 → 0, every other neighbour shown → 8; summaries: schema filler."""
    spec = json.dumps(body.get("response_format", {}))
    prompt = body["messages"][-1]["content"]
    if '"scores"' in spec:
        shown = sorted({int(x) for x in __import__("re").findall(r'id="N(\d+)"', prompt)})
        return json.dumps({"scores": [{"id": f"N{i}", "score": {1: 10, 2: 0}.get(i, 8)} for i in shown]})
    return schema_reply(body, random.Random(0))


def test_llm_edge_weights_are_forward_seed_arcs(tmp_path, encoder):
    from hyperrag.llm.backends import OpenAICompatible

    ds = sample_dataset()
    with FakeOpenAIServer(responder=scripted) as server:
        llm = OpenAICompatible(base_url=server.base_url, model="fake", api_key_env=None, show_usage=False,
                               cache_path=str(tmp_path / "llm.sqlite"),
                               client={"concurrency": 4, "timeout_s": 5, "max_retries": 1})
        with llm:
            settings = method_settings("catrag", index_root=str(tmp_path), anchoring=False, passage_boost=False,
                                       fact_filter=False, edge_scoring={"n_seed": 5, "k_edge": 3, "tau_facts": 3,
                                                                        "weak_multiplier": 0.2})
            r = CatRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
            r.index(ds)
            seeds = r.seed(["Which prizes did Marie Curie win, and whom did she marry?"])
            delta = r.edge_delta(seeds)
            assert server.stats["requests"] >= 1
    assert delta is not None
    seed_entities = set(torch.topk(seeds.entity_weight[0], 5).indices.tolist())
    assert set(delta.src.tolist()) <= seed_entities  # forward arcs leaving seeds only
    num_e = r.graph.num_entities
    assert bool((delta.dst < num_e).all())  # relation arcs: entity → entity
    adj = r.edge_scorer.adjacency
    ratio = delta.weight / adj.pair_weight(delta.src, delta.dst, r.graph.num_nodes)
    by_seed: dict[int, list[float]] = {}
    for s, x in zip(delta.src.tolist(), ratio.tolist()):
        by_seed.setdefault(s, []).append(round(x, 3))
    # each scored seed: N1 → ×5, N2 → ×0, N3 → ×2.5 (score 8); arcs past k_edge = 3 → ×0.2 (weak)
    busy = [e for e in by_seed if int((adj.dst[adj.ptr[e]:adj.ptr[e + 1]]).unique().numel()) > 3]
    assert busy, "the query should seed an entity with more than k_edge neighbours"
    for e in busy:
        assert max(by_seed[e]) == 5.0 and 0.0 in by_seed[e] and 0.2 in by_seed[e], by_seed[e]
    assert r.describe()["edge_scoring_llm_calls"] == len(by_seed)
