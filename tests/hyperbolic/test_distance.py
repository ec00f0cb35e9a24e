"""Distances and the fused Nickel & Kiela loss against geoopt and autograd."""

import geoopt
import pytest
import torch

from hyperrag.hyperbolic.distance import (
    arcosh1p,
    distance_to_origin,
    grouped_distance,
    pairwise_poincare_distance,
    poincare_distance,
)
from hyperrag.hyperbolic.losses import nickel_kiela_grouped, nickel_kiela_loss


def ball_points(n, d, c, seed=0, spread=0.15):
    gen = torch.Generator().manual_seed(seed)
    ball = geoopt.PoincareBall(c=c)
    return ball.projx(torch.randn(n, d, generator=gen, dtype=torch.float64) * spread / c ** 0.5)


@pytest.mark.parametrize("c", [1.0, 0.5, 2.0])
def test_distance_matches_geoopt(c):
    x, y = ball_points(40, 6, c, 0), ball_points(40, 6, c, 1)
    ball = geoopt.PoincareBall(c=c)
    torch.testing.assert_close(poincare_distance(x, y, c), ball.dist(x, y), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(pairwise_poincare_distance(x, y, c), ball.dist(x[:, None], y[None]),
                               rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(distance_to_origin(x, c), ball.dist0(x), rtol=1e-6, atol=1e-6)


def test_coincident_points_have_zero_finite_gradient():
    x = torch.full((3, 4), 0.1, requires_grad=True)
    y = x.detach().clone().requires_grad_()
    d = poincare_distance(x, y)
    d.sum().backward()
    assert torch.all(d < 1e-7)  # arcosh(1 + eps), eps = 1e-15 keeps the gradient finite
    assert torch.all(x.grad == 0) and torch.all(y.grad == 0)
    assert torch.isfinite(arcosh1p(torch.zeros(1))).all()


@pytest.mark.parametrize("b, groups", [(12, 3), (13, 4), (6, 6)])
def test_grouped_distance_is_shared_negatives(b, groups):
    x, y = ball_points(b, 5, 1.0, 0), ball_points(groups * 3, 5, 1.0, 1).view(groups, 3, 5)
    g = -(-b // groups)
    expected = poincare_distance(x[:, None], y.repeat_interleave(g, 0)[:b])
    torch.testing.assert_close(grouped_distance(x, y), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("b, groups, c", [(12, 3, 1.0), (13, 4, 0.7), (5, 5, 1.0), (7, 1, 2.0)])
def test_fused_nickel_kiela_equals_autograd_reference(b, groups, c):
    xu = ball_points(b, 4, c, 0).requires_grad_()
    xv = ball_points(b, 4, c, 1).requires_grad_()
    xn = ball_points(groups * 3, 4, c, 2).view(groups, 3, 4).requires_grad_()
    valid = torch.rand(b, 3, generator=torch.Generator().manual_seed(3)) > 0.3
    ref = nickel_kiela_loss(poincare_distance(xu, xv, c), grouped_distance(xu, xn, c), valid)
    out = nickel_kiela_grouped(xu, xv, xn, valid, c)
    torch.testing.assert_close(out, ref)
    for a, r in zip(torch.autograd.grad(out, (xu, xv, xn)), torch.autograd.grad(ref, (xu, xv, xn))):
        torch.testing.assert_close(a, r)
    assert torch.autograd.gradcheck(lambda u, v, n: nickel_kiela_grouped(u, v, n, valid, c), (xu, xv, xn))


def test_masked_negatives_do_not_count():
    d_pos = torch.tensor([1.0, 2.0])
    d_neg = torch.tensor([[0.5, 3.0], [0.1, 0.2]])
    all_masked = nickel_kiela_loss(d_pos, d_neg, torch.zeros(2, 2, dtype=torch.bool))
    assert all_masked.item() == pytest.approx(0.0, abs=1e-7)  # -log softmax of a single candidate
    one = nickel_kiela_loss(d_pos[:1], d_neg[:1, 1:])
    masked = nickel_kiela_loss(d_pos[:1], d_neg[:1], torch.tensor([[False, True]]))
    assert masked.item() == pytest.approx(one.item())


def test_paired_distance_has_zero_gradient_where_points_coincide():
    """The anchor term at the start (x = x⁰): an exact zero, not ~1e-10 that Adam would turn into a full step."""
    from hyperrag.hyperbolic.distance import paired_distance

    x = (torch.rand(6, 4, dtype=torch.float64) - 0.5) * 0.5
    y = x.clone()
    y[3:] += 0.01
    x.requires_grad_(True)
    paired_distance(x, y).sum().backward()
    assert torch.equal(x.grad[:3], torch.zeros_like(x.grad[:3])) and bool((x.grad[3:].abs() > 0).all())
