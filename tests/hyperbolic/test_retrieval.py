"""Batched hyperbolic top-k against brute force."""

import geoopt
import pytest
import torch

from hyperrag.hyperbolic.retrieval import topk_poincare


@pytest.mark.parametrize("c, block", [(1.0, None), (0.5, 7), (2.0, 1)])
def test_topk_matches_brute_force(c, block):
    gen = torch.Generator().manual_seed(0)
    ball = geoopt.PoincareBall(c=c)
    points = ball.projx(torch.randn(400, 8, generator=gen) * 0.6 / c ** 0.5)
    queries = ball.projx(torch.randn(33, 8, generator=gen) * 0.6 / c ** 0.5)
    idx, dist = topk_poincare(queries, points, 10, curvature=c, block_rows=block)
    brute = ball.dist(queries.double()[:, None], points.double()[None])  # float64 reference
    ref_dist, ref_idx = torch.topk(brute, 10, largest=False)
    assert torch.equal(idx, ref_idx)
    torch.testing.assert_close(dist.double(), ref_dist, rtol=1e-4, atol=1e-4)
    assert torch.all(dist[:, 1:] >= dist[:, :-1])


def test_exclude_self_and_small_k():
    gen = torch.Generator().manual_seed(1)
    points = torch.randn(20, 3, generator=gen) * 0.2
    idx, _ = topk_poincare(points, points, 50, exclude=torch.arange(20))
    assert idx.shape == (20, 19)  # k clipped to the 19 other points
    assert not (idx == torch.arange(20)[:, None]).any()
    idx, _ = topk_poincare(points, points, 1)
    assert torch.equal(idx[:, 0], torch.arange(20))  # without exclusion each point is its own nearest
