"""Tree closures and the OpenIE passage graph."""

import torch

from hyperrag.data import read_openie, sample_dataset
from hyperrag.hyperbolic.graphs import shared_entity_edges, tree_closure, tree_depths, tree_edges, tree_size


def test_benchmark_tree_sizes():
    assert tree_size(4, 6) == 5461
    assert tree_closure(4, 6).shape == (2, 30948)
    assert tree_size(1, 3) == 4


def test_closure_is_every_descendant_ancestor_pair():
    closure = tree_closure(2, 3)
    parent = {c: p for c, p in tree_edges(2, 3).T.tolist()}
    expected = set()
    for node in range(1, tree_size(2, 3)):
        a = node
        while a in parent:
            a = parent[a]
            expected.add((node, a))
    assert set(map(tuple, closure.T.tolist())) == expected
    assert tree_depths(2, 3).tolist() == [0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3]


def test_shared_entity_graph_on_sample():
    ds = sample_dataset()
    openie = read_openie(ds.openie_path, ds.corpus)
    edges, weight = shared_entity_edges(openie, max_entity_passages=20, max_neighbors=3)
    pairs = set(map(tuple, edges.T.tolist()))
    assert edges.shape[1] > 0 and weight.shape == (edges.shape[1],) and bool((weight > 0).all())
    assert all((b, a) in pairs for a, b in pairs)  # symmetric
    assert all(a != b for a, b in pairs)
    titles = [p.title for p in ds.corpus.passages]
    linked = {(titles[a], titles[b]) for a, b in pairs}
    assert ("Marie Curie", "Pierre Curie") in linked  # they share "pierre curie"
    # each passage keeps at most 3 of its own links; the union can add links chosen by the neighbour
    assert int(torch.bincount(edges[0]).max()) <= 3 + len(titles)
