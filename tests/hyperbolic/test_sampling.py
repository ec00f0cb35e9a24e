"""Negative sampling and the edge-batch stream."""

import pytest
import torch

from hyperrag.hyperbolic.datamodule import EdgeBatches, EdgeDataModule
from hyperrag.hyperbolic.graphs import tree_closure, tree_size
from hyperrag.hyperbolic.sampling import NegativeSampler


def test_bitmap_and_sorted_keys_agree():
    edges, n = tree_closure(3, 4), tree_size(3, 4)
    bitmap, keys = NegativeSampler(edges, n), NegativeSampler(edges, n, max_bitmap_bytes=0)
    assert bitmap.bitmap is not None and keys.bitmap is None
    gen = torch.Generator().manual_seed(0)
    u = torch.cat([edges[0], torch.randint(0, n, (500,), generator=gen)])
    v = torch.cat([edges[1], torch.randint(0, n, (500,), generator=gen)])
    assert torch.equal(bitmap.is_relation(u, v), keys.is_relation(u, v))
    assert bitmap.is_relation(edges[0], edges[1]).all()
    assert not bitmap.is_relation(edges[1], edges[0]).any()  # "out": only u -> v is excluded
    assert NegativeSampler(edges, n, exclude="both").is_relation(edges[1], edges[0]).all()


def test_invalid_negatives_are_exactly_self_and_neighbours():
    edges, n = tree_closure(2, 3), tree_size(2, 3)
    sampler = NegativeSampler(edges, n, exclude="both")
    u = edges[0].repeat(20)
    neg, valid = sampler.sample(u, 7, torch.Generator().manual_seed(0))
    related = {(a, b) for a, b in edges.T.tolist()} | {(b, a) for a, b in edges.T.tolist()}
    for i, src in enumerate(u.tolist()):
        for j, cand in enumerate(neg[i].tolist()):
            assert valid[i, j].item() == (cand != src and (src, cand) not in related)


def test_grouped_negatives_shapes():
    edges, n = tree_closure(2, 3), tree_size(2, 3)
    u = edges[0][:10]
    sampler = NegativeSampler(edges, n)
    neg, valid = sampler.sample(u, 4, torch.Generator().manual_seed(0), group_size=4)
    assert neg.shape == (3, 4) and valid.shape == (10, 4)  # ceil(10 / 4) groups
    per_source = neg.repeat_interleave(4, 0)[:10]
    assert torch.equal(valid, (per_source != u[:, None]) & ~sampler.is_relation(u[:, None], per_source))


def test_epoch_covers_every_edge_once_and_is_reproducible():
    edges, n = tree_closure(2, 4), tree_size(2, 4)
    stream = EdgeBatches(edges, n, batch_size=16, num_negatives=3, seed=1)
    batches = list(stream)
    assert len(batches) == len(stream) == 7
    seen = torch.cat([b["u"] * n + b["v"] for b in batches]).sort().values
    assert torch.equal(seen, (edges[0] * n + edges[1]).sort().values)
    again = list(EdgeBatches(edges, n, batch_size=16, num_negatives=3, seed=1))
    assert all(torch.equal(a["neg"], b["neg"]) for a, b in zip(batches, again))
    assert not torch.equal(torch.cat([b["u"] for b in list(stream)]), torch.cat([b["u"] for b in batches]))
    dm = EdgeDataModule(edges, n, batch_size=16)
    assert len(dm.train_dataloader()) == 7


def test_degree_distribution_follows_relation_counts():
    """gensim's protocol: a node is drawn in proportion to its occurrences in the relations (never if none)."""
    edges = torch.tensor([[0, 0, 0, 1], [1, 2, 3, 2]])  # counts: 0→3, 1→2, 2→2, 3→1, 4→0
    sampler = NegativeSampler(edges, 5, distribution="degree")
    gen = torch.Generator().manual_seed(0)
    neg, _ = sampler.sample(torch.zeros(4000, dtype=torch.long), 10, gen)
    freq = torch.bincount(neg.flatten(), minlength=5).float() / neg.numel()
    assert torch.allclose(freq, torch.tensor([3, 2, 2, 1, 0]) / 8.0, atol=0.01)
    with pytest.raises(ValueError, match="distribution"):
        NegativeSampler(edges, 5, distribution="zipf")
