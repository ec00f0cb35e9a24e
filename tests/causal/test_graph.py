import json
import re
from dataclasses import replace

import pytest
import torch

from hyperrag.causal.graph import (
    CausalGraph,
    build_causal_graph,
    load_or_build_causal_index,
)
from hyperrag.config import method_settings
from tests.causal.corpus import causal_dataset
from tests.causal.llm_double import fake_llm, task_of, user_text
from tests.llm.fake_server import FakeOpenAIServer, Reply

CAUSAL = method_settings("cdfrag").causal


def edges(graph: CausalGraph) -> dict[tuple[str, str], int]:
    return {graph.triple(e): e for e in range(graph.num_edges)}


def test_rule_graph_is_directed_with_provenance(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    g = build_causal_graph(ds, encoder, replace(CAUSAL, use_openie=False))
    e = edges(g)
    assert g.stats["candidates"]["strong"] == 10 and g.num_edges == 10  # weak connectives not accepted
    rain = e[("Torrential rain in the spring of 2004", "a flood in the lower valley")]
    info = g.edge_info[rain]
    assert info["passage_id"] == "c08" and "Torrential rain" in info["sentence"] and info["connective"] == "caused"
    assert g.passage_ids[int(g.edge_passage[rain])] == "c08" and float(g.edge_weight[rain]) == 1.0
    assert ("the drought dried the wells of the farms", "Crop failures followed") in e  # "Y because X": X -> Y
    assert g.node_emb.shape == (g.num_nodes, 384)
    assert torch.allclose(g.node_emb.norm(dim=1), torch.ones(g.num_nodes), atol=1e-4)
    # weak connectives enter with a prior, OpenIE relations with theirs
    g2 = build_causal_graph(ds, encoder, replace(CAUSAL, weak_prior=0.5, openie_prior=0.6),
                            openie_triples=[[tuple(t) for t in d["extracted_triples"]]
                                            for d in json.loads(ds.openie_path.read_text())["docs"]])
    assert g2.num_edges > g.num_edges
    assert {round(float(w), 2) for w in g2.edge_weight} == {1.0, 0.6, 0.5}


def test_alias_links_join_similar_nodes(tmp_path, encoder):
    g = build_causal_graph(causal_dataset(tmp_path), encoder, replace(CAUSAL, use_openie=False, alias_threshold=0.6))
    assert g.alias_index.shape[1] > 0 and g.alias_index.shape[1] % 2 == 0
    names = {(g.node_names[u], g.node_names[v]) for u, v in g.alias_index.t().tolist()}
    assert ("mass migration to the coast", "the migration") in names  # famine -> migration -> city grew
    assert ("the migration", "mass migration to the coast") in names  # stored both ways
    assert bool((g.alias_weight >= 0.6).all())


class PositionalClassifier:
    """TEST DOUBLE for the pair classifier: believes E1 causes E2 when E1 comes first in the text."""

    def predict_proba(self, texts, batch_size=64):
        return torch.tensor([0.9 if t.index("[E1]") < t.index("[E2]") else 0.1 for t in texts])


def test_classifier_scores_and_reorients(tmp_path, encoder):
    g = build_causal_graph(causal_dataset(tmp_path), encoder, replace(CAUSAL, use_openie=False),
                           classifier=PositionalClassifier())
    e = edges(g)
    # "Crop failures followed because the drought dried the wells": the double prefers the textual order
    assert ("Crop failures followed", "the drought dried the wells of the farms") in e
    rev = e[("Crop failures followed", "the drought dried the wells of the farms")]
    assert g.edge_info[rev]["reverse"] is True and g.edge_info[rev]["p_rev"] == 0.9
    assert g.num_edges == 12  # the weak connectives are accepted too (0.9 >= 0.5)
    assert torch.allclose(g.edge_weight, torch.full((12,), 0.9))


def verifier(body: dict) -> str:
    prompt = user_text(body)
    a = re.search(r'<node id="C">\n(.*?)\n</node>', prompt, re.DOTALL).group(1)
    if a.startswith("Torrential rain"):
        return json.dumps({"correct": True, "direction": "reversed", "refined": "A flood brought torrential rain.",
                           "justification": "j", "confidence": "Low"})
    if "famine" in a:
        return json.dumps({"correct": False, "refined": "", "justification": "j", "confidence": "High"})
    return json.dumps({"correct": True, "direction": "as_given", "refined": f"Statement about {a}.",
                       "justification": "j", "confidence": "Medium"})


def test_llm_verification_drops_and_reorients(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    with FakeOpenAIServer(responder=verifier) as server, fake_llm(server, tmp_path) as llm:
        g = build_causal_graph(ds, encoder, replace(CAUSAL, use_openie=False), llm=llm)
        assert all(task_of(b) == "causal_pair_verification" for b in server.requests)
        assert server.stats["requests"] == 10
    e = edges(g)
    assert ("a flood in the lower valley", "Torrential rain in the spring of 2004") in e  # reoriented
    assert not any("famine" in c.lower() for c, _ in e)  # "none" -> dropped
    assert g.stats["llm_verified"] == 10 and g.stats["llm_dropped"] == 1 and g.stats["llm_reoriented"] == 1
    w = {k: round(float(g.edge_weight[i]), 3) for k, i in e.items()}
    assert w[("a flood in the lower valley", "Torrential rain in the spring of 2004")] == 0.667  # (1 + 1/3) / 2
    assert w[("The collapse", "the closure of the coastal road")] == 0.833  # (1 + 2/3) / 2
    rain = e[("a flood in the lower valley", "Torrential rain in the spring of 2004")]
    assert g.edge_info[rain]["llm"]["direction"] == "b->a"
    # the rephrased causal statement stays with the edge (what the generator reads)
    assert g.edge_info[rain]["statement"] == "A flood brought torrential rain."
    collapse = e[("The collapse", "the closure of the coastal road")]
    assert g.edge_info[collapse]["statement"] == "Statement about The collapse."
    # the prompt carries the contextual metadata (Appendix A.2)
    assert "Dataset: causal_toy" in user_text(server.requests[0]) and "Extracted by: connective and OpenIE rules" \
        in user_text(server.requests[0])


def test_every_pair_is_verified_and_failures_are_counted(tmp_path, encoder):
    """verify_max_pairs: null verifies every accepted pair; a failed call leaves the pair unverified, counted."""
    ds = causal_dataset(tmp_path)

    def flaky(body: dict) -> str:
        return "garbage" if "famine" in user_text(body) else verifier(body)

    with FakeOpenAIServer(responder=flaky) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        g = build_causal_graph(ds, encoder, replace(CAUSAL, use_openie=False, verify_max_pairs=None), llm=llm)
    assert g.stats["llm_asked"] == 10 and g.stats["llm_verified"] == 9 and g.stats["llm_failed"] == 1
    famine = [i for i, info in enumerate(g.edge_info) if "famine" in info["sentence"].lower()]
    assert famine and all("llm" not in g.edge_info[i] for i in famine)


def test_every_verification_failing_stops_the_build_and_the_rerun_verifies(tmp_path, encoder):
    """A dead endpoint (every verification call answered HTTP 500) stops the index build with one line instead of
    saving a causal index of unverified pairs; once the endpoint answers, the same call builds it, verified."""
    from hyperrag.llm import build_llm
    from hyperrag.llm.errors import StageFailedError

    ds = causal_dataset(tmp_path)
    settings = replace(CAUSAL, use_openie=False, verify_max_pairs=None)
    root = tmp_path / "idx"
    down = r"CDF-RAG causal pair verification: every LLM call failed \(10 pairs; first error: http_5xx"
    with FakeOpenAIServer(responder=lambda body: Reply(status=500, body="down")) as server, \
            fake_llm(server, tmp_path) as llm, pytest.raises(StageFailedError, match=down):
        load_or_build_causal_index(ds, encoder, settings, llm=llm, root=root)
    with FakeOpenAIServer(responder=verifier) as server, fake_llm(server, tmp_path) as llm:
        built = load_or_build_causal_index(ds, encoder, settings, llm=llm, root=root)
    assert built.graph.stats["llm_verified"] == 10 and built.graph.stats["llm_failed"] == 0
    # llm=oracle has no gold for a verification: every call fails by design, the pairs stay unverified, no stop
    with build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "gold_answers", "cache_path": None, "show_usage": False}, ds) as oracle:
        g = build_causal_graph(ds, encoder, settings, llm=oracle)
    assert g.stats["llm_asked"] == 10 and g.stats["llm_failed"] == 10 and g.num_edges == 10


def test_index_is_cached_and_keyed(tmp_path, encoder):
    ds = causal_dataset(tmp_path)
    first = load_or_build_causal_index(ds, encoder, CAUSAL, root=tmp_path / "idx")
    again = load_or_build_causal_index(ds, encoder, CAUSAL, root=tmp_path / "idx")
    assert first.built and not again.built and first.directory == again.directory
    assert again.graph.node_names == first.graph.node_names
    assert torch.equal(again.graph.edge_index, first.graph.edge_index)
    assert again.graph.edge_info == first.graph.edge_info
    other = load_or_build_causal_index(ds, encoder, replace(CAUSAL, weak_prior=0.5), root=tmp_path / "idx")
    assert other.built and other.directory != first.directory
    assert (first.directory / "manifest.json").is_file()
