"""RAPTOR: soft Gaussian-mixture assignment, the re-clustering rule, the tree's layers (UMAP + GMM for real, on
synthetic embeddings), LLM summaries against a scripted fake LLM server (a test double), collapsed and
traversal retrieval over a hand-made tree, and the retriever on the bundled sample."""

import json

import numpy as np
import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.graph.utils import csr_from_lists
from hyperrag.retrievers.raptor import RaptorRetriever
from hyperrag.tree import clustering
from hyperrag.tree.clustering import ClusteringSettings, raptor_clusters, soft_mixture
from hyperrag.tree.summary_tree import SummaryTree, TreeBuilder, TreeSettings
from tests.hierarchy.fake_llm import fake_llm, prompt_of

DIM = 16


def test_soft_assignment_puts_a_midpoint_in_both_clusters():
    rng = np.random.default_rng(0)
    a = rng.normal([0.0, 0.0], 1.0, size=(100, 2))
    b = rng.normal([4.0, 0.0], 1.0, size=(100, 2))
    x = np.vstack([a, b, [[2.0, 0.0]]])
    labels, k = soft_mixture(x, threshold=0.1, max_clusters=6, seed=0)
    assert k == 2  # BIC picks the two components
    far = [i for i in range(200) if abs(x[i, 0] - 2.0) > 1.5]
    assert all(len(labels[i]) == 1 for i in far)  # points far from the middle belong to one cluster
    assert len({int(labels[i][0]) for i in far if x[i, 0] < 0}) == 1
    assert {int(labels[i][0]) for i in far if x[i, 0] < 0} != {int(labels[i][0]) for i in far if x[i, 0] > 4}
    assert sorted(labels[200].tolist()) == [0, 1]  # the midpoint: posterior > 0.1 for both → in both clusters
    hard, _ = soft_mixture(x, threshold=0.6, max_clusters=6, seed=0)
    assert len(hard[200]) == 1 and all(len(h) == 1 for h in hard)  # above 0.5: one component each


def test_clusters_over_the_token_limit_are_clustered_again(monkeypatch):
    calls = []

    def fake_two_stage(x, settings):  # TEST DOUBLE of the UMAP + GMM stage: six and two, then halves
        calls.append(len(x))
        return [[0, 1, 2, 3, 4, 5], [6, 7]] if len(x) == 8 else [[0, 1, 2], [3, 4, 5]]

    monkeypatch.setattr(clustering, "two_stage_clusters", fake_two_stage)
    s = ClusteringSettings(reduction_dim=2, threshold=0.1, max_clusters=5, local_neighbors=3, max_cluster_tokens=50,
                           seed=0)
    out = raptor_clusters(np.zeros((8, 4)), [10] * 8, s)  # 60 tokens > 50: the first cluster is split again
    assert out == [[0, 1, 2], [3, 4, 5], [6, 7]] and calls == [8, 6]
    calls.clear()
    assert raptor_clusters(np.zeros((8, 4)), [1] * 8, s) == [[0, 1, 2, 3, 4, 5], [6, 7]]  # within the limit
    calls.clear()
    monkeypatch.setattr(clustering, "two_stage_clusters", lambda x, settings: calls.append(len(x)) or
                        [list(range(len(x)))])
    assert raptor_clusters(np.zeros((8, 4)), [10] * 8, s) == [list(range(8))]  # everything in one: kept whole
    assert calls == [8]  # ... without clustering the same points again (it would never end)


class BlobEncoder:
    """TEST DOUBLE: embeds a text as the normalised mean of the fixed vectors of the leaf sentences it contains
    (so an extractive summary lands between its children, as a real encoder would put it)."""

    model_key = model_name = "blob-encoder"
    dim = DIM

    def __init__(self, vectors: dict[str, torch.Tensor]):
        self.vectors = vectors

    def encode(self, texts, desc="encode"):
        out = []
        for t in texts:
            hits = [v for s, v in self.vectors.items() if s in t]
            out.append(torch.nn.functional.normalize(torch.stack(hits).mean(0), dim=0))
        return torch.stack(out)


def blobs(per_blob: int = 10):
    g = torch.Generator().manual_seed(0)
    centers = torch.nn.functional.normalize(torch.randn(3, DIM, generator=g), dim=1) * 3
    texts, vecs = [], {}
    for c in range(3):
        for i in range(per_blob):
            text = f"Leaf {c}-{i} belongs to group {c}."
            texts.append(text)
            vecs[text] = torch.nn.functional.normalize(centers[c] + 0.1 * torch.randn(DIM, generator=g), dim=0)
    return texts, vecs


def tree_settings(**kw):
    clustering_settings = {"reduction_dim": 4, "threshold": 0.1, "max_clusters": 8, "local_neighbors": 5,
                               "max_cluster_tokens": 3500, "seed": 0}
    return TreeSettings(**{"num_layers": 5, "clustering": ClusteringSettings(**clustering_settings),
                           "summary_tokens": 100, "token_counter": "approx", **kw})


@pytest.mark.slow  # UMAP compiles with numba on first use (~20 s)
def test_tree_layers_from_umap_and_gmm():
    texts, vecs = blobs()
    enc = BlobEncoder(vecs)
    tree = TreeBuilder(tree_settings(), enc).build(texts, enc.encode(texts))
    assert tree.num_leaves == 30 and (tree.layer[:30] == 0).all()
    sizes = tree.stats["layer_sizes"]
    assert sizes[0] == 30 and len(sizes) >= 2 and sizes[-1] <= 5  # stops once a layer is this small
    assert sizes == sorted(sizes, reverse=True)
    layer1 = (tree.layer == 1).nonzero().squeeze(1).tolist()
    groups = [{int(texts[leaf].split()[1].split("-")[0]) for leaf in tree.leaves(n).tolist()} for n in layer1]
    assert all(len(g) == 1 for g in groups)  # a first-layer cluster never mixes the three blobs
    assert set().union(*[set(tree.leaves(n).tolist()) for n in layer1]) == set(range(30))  # every leaf is covered
    for n in range(tree.num_leaves, tree.num_nodes):
        kids = tree.children(n).tolist()
        assert kids and all(tree.layer[k] == tree.layer[n] - 1 for k in kids)
        assert set(tree.leaves(n).tolist()) == set().union(*[set(tree.leaves(k).tolist()) for k in kids])
    assert tree.stats["stand_in"] == tree.num_nodes - 30 and not tree.summarised.any()
    from hyperrag.utils.sentences import split_sentences

    for n in layer1:  # the stand-in: lead sentences of its children (here each leaf is one sentence)
        assert set(split_sentences(tree.texts[n])) <= {texts[c] for c in tree.children(n).tolist()}


def test_llm_summaries_and_failed_calls(tmp_path):
    texts, vecs = blobs(4)
    enc = BlobEncoder(vecs)
    clusters = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]

    def respond(body):  # TEST DOUBLE: summarise groups 0 and 1, fail on group 2
        prompt = prompt_of(body)
        if "group 2" in prompt:
            return "not json"
        group = "0" if "group 0" in prompt else "1"
        return json.dumps({"summary": f"Leaf {group}-0 belongs to group {group}. Scripted summary."})

    with fake_llm(respond, tmp_path) as (llm, server):
        out, made = TreeBuilder(tree_settings(summary_tokens=40), enc, llm).summarise(clusters, texts,
                                                                                      enc.encode(texts))
    assert made == [True, True, False]
    assert out[0].endswith("Scripted summary.") and "Scripted" not in out[2]
    assert "Leaf 2-" in out[2]  # the failed cluster got the extractive stand-in
    assert "at most 30 words" in prompt_of(server.requests[0])


def hand_tree():
    """Leaves 0-5; node 6 = {0, 1, 2}, node 7 = {3, 4, 5} (layer 1); node 8 = {6, 7} (layer 2)."""
    emb = torch.eye(6, DIM)
    n6 = torch.nn.functional.normalize(emb[:3].sum(0), dim=0)
    n7 = torch.nn.functional.normalize(emb[3:6].sum(0), dim=0)
    n8 = torch.nn.functional.normalize(n6 + n7, dim=0)
    children = [[]] * 6 + [[0, 1, 2], [3, 4, 5], [6, 7]]
    leaves = [[i] for i in range(6)] + [[0, 1, 2], [3, 4, 5], [0, 1, 2, 3, 4, 5]]
    cp, ci = csr_from_lists(children)
    lp, li = csr_from_lists(leaves)
    texts = [f"leaf {i} " + "word " * 9 for i in range(6)] + ["summary a", "summary b", "summary root"]
    return SummaryTree(texts, torch.tensor([0] * 6 + [1, 1, 2]), cp, ci, lp, li, torch.stack([*emb, n6, n7, n8]),
                       torch.zeros(9, dtype=torch.bool))


def retriever_on(tree, **kw):
    ret = RaptorRetriever(method_settings("raptor", **kw), encoder=None, device="cpu")
    ret.tree, ret.node_emb = tree, tree.embeddings
    ret.node_tokens = [ret.count(t) for t in tree.texts]
    ret.passage_ids = [f"p{i}" for i in range(6)]
    return ret


def test_collapsed_tree_takes_nodes_best_first_within_the_budget():
    tree = hand_tree()
    scores = torch.tensor([0.9, 0.1, 0.0, 0.8, 0.2, 0.0, 0.5, 0.7, 0.6])
    ret = retriever_on(tree, top_k=3, max_context_tokens=100)
    ranked, chosen = ret.collapsed(scores)
    assert chosen == [0, 3, 7] and ranked[:4] == [0, 3, 7, 8]
    tight = retriever_on(tree, top_k=3, max_context_tokens=20)  # a leaf costs 14 tokens: only the first fits
    assert tight.collapsed(scores)[1] == [0]
    # passages: node by node, a summary node standing for its leaves (best first)
    assert ret.leaf_order(ranked, scores, 6) == [0, 3, 4, 5, 1, 2]  # node 7 brings 4, 5; the root 1, 2


def test_traversal_descends_from_the_top_layer():
    tree = hand_tree()
    scores = torch.tensor([0.9, 0.1, 0.0, 0.8, 0.2, 0.0, 0.5, 0.7, 0.6])
    ret = retriever_on(tree, retrieval="traversal", top_k=1, max_context_tokens=1000)
    ranked, chosen = ret.traversal(scores)
    assert chosen == [8, 7, 3]  # root, its better child, that child's best leaf
    assert ranked[0] == 3  # the leaf the traversal reached ranks first


@pytest.mark.slow  # builds RAPTOR's tree over the sample (~20-30 s on 2 cores)
def test_retriever_on_the_sample(tmp_path, encoder):
    sample = sample_dataset()
    ret = RaptorRetriever(method_settings("raptor", index_root=str(tmp_path / "index")), encoder=encoder,
                          device="cpu")
    ret.index(sample)
    assert ret.tree.num_leaves == 12 and ret.skipped["cluster_summary"] == ret.tree.num_nodes - 12
    out = ret.retrieve([q.question for q in sample.queries], 10)
    assert out.indices.shape == (6, 10) and all(len(set(r)) == 10 for r in out.indices.tolist())
    assert all(sum(ret.node_tokens[n] for n, _, _ in d["selected"]) <= 3500 for d in out.details)
    again = RaptorRetriever(method_settings("raptor", index_root=str(tmp_path / "index")), encoder=encoder,
                            device="cpu")
    again.index(sample)
    assert not again.tree_built and again.tree.texts == ret.tree.texts  # loaded from its index directory


def test_a_tree_with_failed_summaries_is_built_again(tmp_path, monkeypatch):
    """A tree whose LLM summaries partly failed is not reused as it is: the next build asks the failed ones again
    (the ones that worked come back from the LLM response cache)."""
    from hyperrag.tree import summary_tree

    texts, vecs = blobs(4)
    enc = BlobEncoder(vecs)
    monkeypatch.setattr(summary_tree, "raptor_clusters",  # TEST DOUBLE of the clustering: the three blobs
                        lambda x, tokens, settings: [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])
    settings = tree_settings(clustering=ClusteringSettings(reduction_dim=2, threshold=0.1, max_clusters=8,
                                                           local_neighbors=5, max_cluster_tokens=3500, seed=0))
    fail = {"group 2": True}

    def respond(body):
        prompt = prompt_of(body)
        if fail["group 2"] and "group 2" in prompt:
            return "not json"
        group = next(g for g in "012" if f"group {g}" in prompt)
        return json.dumps({"summary": f"Leaf {group}-0 belongs to group {group}. Scripted summary."})

    ids = [f"p{i}" for i in range(12)]
    with fake_llm(respond, tmp_path) as (llm, server):
        first, _, built = summary_tree.load_or_build_tree(ids, texts, enc.encode(texts), enc, llm, settings,
                                                          tmp_path / "index")
        assert built and first.stats["stand_in"] == 1
        fail["group 2"] = False
        asked = len(server.requests)
        second, _, built = summary_tree.load_or_build_tree(ids, texts, enc.encode(texts), enc, llm, settings,
                                                           tmp_path / "index")
        assert built and second.stats["stand_in"] == 0
        assert len(server.requests) == asked + 1  # only the failed summary was asked again
        third, _, built = summary_tree.load_or_build_tree(ids, texts, enc.encode(texts), enc, llm, settings,
                                                          tmp_path / "index")
        assert not built and third.texts == second.texts


def test_every_summary_failing_stops_the_tree_build_and_the_rerun_builds_it(tmp_path, monkeypatch):
    """A dead endpoint (HTTP 500 on every summary) stops the build with one line before stand-ins become the next
    layer's input; no tree is saved, and once the endpoint answers the same call builds it with LLM summaries."""
    from hyperrag.llm.errors import StageFailedError
    from hyperrag.tree import summary_tree
    from tests.llm.fake_server import Reply

    texts, vecs = blobs(4)
    enc = BlobEncoder(vecs)
    monkeypatch.setattr(summary_tree, "raptor_clusters",  # TEST DOUBLE of the clustering: the three blobs
                        lambda x, tokens, settings: [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]])
    settings = tree_settings(clustering=ClusteringSettings(reduction_dim=2, threshold=0.1, max_clusters=8,
                                                           local_neighbors=5, max_cluster_tokens=3500, seed=0))
    down = {"on": True}

    def respond(body):
        if down["on"]:
            return Reply(status=500, body="down")
        group = next(g for g in "012" if f"group {g}" in prompt_of(body))
        return json.dumps({"summary": f"Leaf {group}-0 belongs to group {group}. Scripted summary."})

    ids = [f"p{i}" for i in range(12)]
    with fake_llm(respond, tmp_path) as (llm, _):
        with pytest.raises(StageFailedError, match=r"RAPTOR cluster summaries: every LLM call failed \(3 clusters"):
            summary_tree.load_or_build_tree(ids, texts, enc.encode(texts), enc, llm, settings, tmp_path / "index")
        assert not list((tmp_path / "index").glob("*/manifest.json"))  # nothing saved to build on
        down["on"] = False
        tree, _, built = summary_tree.load_or_build_tree(ids, texts, enc.encode(texts), enc, llm, settings,
                                                         tmp_path / "index")
    assert built and tree.stats["llm_summaries"] == 3 and tree.stats["stand_in"] == 0


def test_raptor_reads_passages_only_so_the_runner_extracts_no_triples(tmp_path):
    """RAPTOR's tree is built from the passages alone: with ``llm=oracle`` (or any LLM) and no released OpenIE the
    runner must not extract the corpus for it (on 2wiki_dev: 6,119 failed oracle OpenIE calls, or a spaCy parse
    under ``extractor=spacy``, counted in its index cost for nothing)."""
    from dataclasses import replace

    from hyperrag.extraction.settings import ExtractorSettings
    from hyperrag.runners.prepare import prepare_dataset, retriever_class

    assert not retriever_class(method_settings("raptor")).uses_triples
    dataset = replace(sample_dataset(), openie_path=None)
    spacy = ExtractorSettings(source="spacy", triples="title_subject", dates=True, noun_chunks=True, batch_size=64,
                              shard_size=512)
    out = prepare_dataset(dataset, None, tmp_path, extractor=spacy,
                          uses_triples=retriever_class(method_settings("raptor")).uses_triples)
    assert out.extraction["source"] == "none" and out.extraction["reason"] == "the method reads passages only"
    assert out.openie_path is None and not (tmp_path / "spacy").exists() and not (tmp_path / "openie").exists()
