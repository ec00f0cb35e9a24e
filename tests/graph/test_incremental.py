"""Incremental insert/delete of passages: equal (canonically) to a full build of the final corpus."""

from __future__ import annotations

import random

import pytest
import torch

from hyperrag.data import read_openie, sample_dataset
from hyperrag.data.openie import OpenIERecords
from hyperrag.data.types import Corpus
from hyperrag.graph.build import build_knowledge_graph
from hyperrag.graph.canonical import canonical_graph, graph_differences
from hyperrag.graph.incremental import delete_passages, insert_passages
from hyperrag.graph.knowledge_graph import EdgeType
from hyperrag.graph.provenance import build_provenance, edge_support, node_support
from tests.reliability.doubles import HashEncoder

SETTINGS = {"synonym_threshold": 0.6}  # low enough for the hashing encoder to give synonym edges


@pytest.fixture(scope="module")
def sample():
    ds = sample_dataset()
    return ds.corpus, read_openie(ds.openie_path, ds.corpus)


def subset(sample, positions):
    corpus, openie = sample
    return (Corpus([corpus[i] for i in positions], source="subset"),
            OpenIERecords([openie.entities[i] for i in positions], [openie.triples[i] for i in positions], 0, "subset"))


def build(sample, positions, encoder):
    c, o = subset(sample, positions)
    g, e = build_knowledge_graph(c, o, encoder, **SETTINGS)
    return g, e, build_provenance(g, o)


def embeddings_by_name(graph, emb):
    return {n: v for n, v in zip(graph.entity_names, emb.entity)}


@pytest.mark.parametrize("seed", range(6))
def test_insert_then_delete_equals_full_build(sample, seed):
    rng = random.Random(seed)
    n = len(sample[0])
    order = list(range(n))
    rng.shuffle(order)
    base, new = order[: rng.randint(1, n - 2)], None
    new = [i for i in order if i not in base]
    enc = HashEncoder()
    g, e, p = build(sample, base, enc)
    c_new, o_new = subset(sample, new)
    before = enc.encoded_count
    ins = insert_passages(g, e, p, c_new.passages, o_new.triples, enc, **SETTINGS)
    assert ins.encoded == enc.encoded_count - before
    assert enc.encoded_count - before == len(ins.added_entities) + (len(ins.graph.facts) - len(g.facts)) + len(new)
    full_g, _, _ = build(sample, base + new, HashEncoder())
    assert graph_differences(ins.graph, full_g) == []
    gone = rng.sample(base + new, rng.randint(1, n - 1))
    before = enc.encoded_count
    dele = delete_passages(ins.graph, ins.embeddings, ins.provenance, [sample[0][i].id for i in gone])
    assert enc.encoded_count == before, "delete embeds nothing"
    final = [i for i in base + new if i not in gone]
    ref_g, ref_e, ref_p = build(sample, final, HashEncoder())
    assert graph_differences(dele.graph, ref_g) == []
    mine, ref = embeddings_by_name(dele.graph, dele.embeddings), embeddings_by_name(ref_g, ref_e)
    assert mine.keys() == ref.keys() and all(torch.allclose(mine[k], ref[k]) for k in ref)
    assert torch.equal(dele.embeddings.passage, ref_e.passage[[ref_g.passage_ids.index(p) for p in dele.graph.passage_ids]])
    facts = lambda g, pv, pid: sorted(g.facts[f] for f in pv.passage_facts(g.passage_ids.index(pid)))
    assert all(facts(dele.graph, dele.provenance, pid) == facts(ref_g, ref_p, pid) for pid in ref_g.passage_ids)


def test_delete_everything_of_a_passage_and_touched_nodes(sample):
    enc = HashEncoder()
    g, e, p = build(sample, range(12), enc)
    victim = g.passage_ids[0]
    only_there = [n for i, n in enumerate(g.entity_names) if node_support(g, i) == [victim]]
    assert only_there, "the sample's first passage has entities of its own"
    out = delete_passages(g, e, p, [victim])
    assert victim not in out.graph.passage_ids and set(out.removed_entities) == set(only_there)
    assert not set(only_there) & set(out.graph.entity_names)
    assert out.touched_nodes.numel() > 0 and int(out.touched_nodes.max()) < out.graph.num_nodes
    with pytest.raises(KeyError):
        delete_passages(g, e, p, ["no-such-id"])


def test_provenance_of_edges(sample):
    enc = HashEncoder()
    g, _, p = build(sample, range(12), enc)
    for i in range(g.num_edges):
        support = edge_support(g, p, i)
        assert support, f"edge {i} has no supporting passage"
        if int(g.edge_type[i]) == EdgeType.CONTEXT:
            assert len(support) == 1
    canon = canonical_graph(g)
    assert len(canon["edges"]) == g.num_edges


def test_insert_rejects_known_ids(sample):
    enc = HashEncoder()
    g, e, p = build(sample, range(4), enc)
    c, o = subset(sample, [2, 5])
    with pytest.raises(KeyError):
        insert_passages(g, e, p, c.passages, o.triples, enc, **SETTINGS)
