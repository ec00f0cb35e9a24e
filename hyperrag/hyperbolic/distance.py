"""Poincaré-ball distances, written for speed and safe gradients.

On the ball of curvature ``-c`` (radius ``1/sqrt(c)``)

.. math::
    d_c(x, y) = \\frac{1}{\\sqrt c}\\,\\operatorname{arcosh}\\Big(1 + \\delta\\Big), \\qquad
    \\delta = \\frac{2c\\,\\lVert x-y\\rVert^2}{(1-c\\lVert x\\rVert^2)(1-c\\lVert y\\rVert^2)},

which equals geoopt's ``PoincareBall(c).dist`` (``2/sqrt(c) artanh(sqrt(c) ||(-x) ⊕ y||)``; checked in the
tests) but costs a handful of element-wise ops, and stays exact near the boundary where geoopt's float32
``artanh`` saturates. ``arcosh(1 + δ)`` is evaluated as ``log1p(δ + sqrt(δ (δ + 2)))`` with δ clamped to a
tiny positive value, so coincident points (a node and its own anchor, a negative equal to the positive)
give a zero, finite gradient instead of ``inf``/``NaN``.

Because ``d`` is increasing in δ, and for a fixed query δ is proportional to
``||q - p||² / (1 - c||p||²)``, nearest-neighbour ranking never needs the ``arcosh`` (see
:mod:`hyperrag.hyperbolic.retrieval`).
"""

from __future__ import annotations

import torch

DELTA_EPS = 1e-15
BOUNDARY_EPS = 1e-7


def arcosh1p(delta: torch.Tensor, eps: float = DELTA_EPS) -> torch.Tensor:
    """``arcosh(1 + delta)`` for ``delta >= 0``, stable near 0 (finite gradient)."""
    delta = delta.clamp_min(eps)
    return torch.log1p(delta + torch.sqrt(delta * (delta + 2.0)))


def poincare_delta(x: torch.Tensor, y: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """δ of the distance formula, broadcasting over leading dimensions (last dimension is the point)."""
    c = float(curvature)
    diff2 = (x - y).pow(2).sum(-1)
    alpha = (1.0 - c * x.pow(2).sum(-1)).clamp_min(BOUNDARY_EPS)
    beta = (1.0 - c * y.pow(2).sum(-1)).clamp_min(BOUNDARY_EPS)
    return 2.0 * c * diff2 / (alpha * beta)


def poincare_distance(x: torch.Tensor, y: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """Geodesic distance between points of the Poincaré ball.

    Args:
        x: [..., D] points (broadcastable against ``y``).
        y: [..., D] points.
        curvature: ``c > 0`` (the ball has sectional curvature ``-c``).

    Returns:
        [...] distances, differentiable everywhere (zero gradient at ``x == y``).
    """
    return arcosh1p(poincare_delta(x, y, curvature)) / float(curvature) ** 0.5


class _PairedDistance(torch.autograd.Function):
    """``d_c(x_i, y_i)`` row by row with the analytic backward (a handful of ops instead of ~25)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, y: torch.Tensor, c: float) -> torch.Tensor:  # type: ignore[override]
        diff = x - y
        inv_alpha = 1.0 / (1.0 - c * x.pow(2).sum(-1)).clamp_min(BOUNDARY_EPS)
        inv_beta = 1.0 / (1.0 - c * y.pow(2).sum(-1)).clamp_min(BOUNDARY_EPS)
        raw = 2.0 * c * diff.pow(2).sum(-1) * inv_alpha * inv_beta
        delta = raw.clamp_min(DELTA_EPS)
        root = torch.sqrt(delta * (delta + 2.0))
        ctx.c = c
        ctx.save_for_backward(x, y, diff, inv_alpha, inv_beta, delta, root, raw > DELTA_EPS)
        return torch.log1p(delta + root) / c ** 0.5

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        x, y, diff, inv_alpha, inv_beta, delta, root, apart = ctx.saved_tensors
        c = ctx.c
        # where the points coincide the distance is clamped: its gradient is zero (as autograd's clamp_min
        # gives), not the ~1e-10 the formula leaves — which Adam would scale up to a full step
        g_delta = torch.where(apart, grad / (c ** 0.5 * root), torch.zeros_like(root))
        w = (g_delta * (4.0 * c) * inv_alpha * inv_beta).unsqueeze(-1)  # ∂δ/∂x = 4c (x - y)/(αβ) + 2cδ x/α
        q = g_delta * delta * (2.0 * c)
        grad_x = w * diff + (q * inv_alpha).unsqueeze(-1) * x if ctx.needs_input_grad[0] else None
        grad_y = (q * inv_beta).unsqueeze(-1) * y - w * diff if ctx.needs_input_grad[1] else None
        return grad_x, grad_y, None


def paired_distance(x: torch.Tensor, y: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """Row-wise distances of two [..., D] tensors of the same shape, with a fused analytic backward.

    The values of :func:`poincare_distance` (no broadcasting); used for the anchor term over all nodes.
    """
    return _PairedDistance.apply(x, y, float(curvature))


def grouped_distance(x: torch.Tensor, y: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """Distances from sources to the candidates shared by their group — batched negatives.

    The ``B`` sources are split into ``G`` consecutive groups of ``g = ceil(B / G)``; every source of group
    ``j`` is compared with the same ``k`` candidates ``y[j]`` (the chunked negatives of PyTorch-BigGraph).
    ``||x - y||²`` comes from one batched matrix product, so the cost is O(B·k·D) flops with only
    ``G·k`` candidate rows gathered (and scattered back by the backward) instead of ``B·k``.

    Args:
        x: [B, D] sources.
        y: [G, k, D] candidates per group.
        curvature: ``c``.

    Returns:
        [B, k] distances.
    """
    b, dim = x.shape
    groups, k, _ = y.shape
    g = -(-b // groups)
    c = float(curvature)
    xn = x.pow(2).sum(-1)  # [B]
    yn = y.pow(2).sum(-1)  # [G, k]
    if groups * g != b:  # pad the last group
        x = torch.cat([x, x.new_zeros(groups * g - b, dim)])
    dot = torch.bmm(x.view(groups, g, dim), y.transpose(1, 2)).reshape(groups * g, k)[:b]  # [B, k]
    yn_b = yn.repeat_interleave(g, dim=0)[:b]  # [B, k]
    diff2 = (xn.unsqueeze(1) + yn_b - 2.0 * dot).clamp_min(0.0)
    alpha = (1.0 - c * xn).clamp_min(BOUNDARY_EPS)
    beta = (1.0 - c * yn_b).clamp_min(BOUNDARY_EPS)
    return arcosh1p(2.0 * c * diff2 / (alpha.unsqueeze(1) * beta)) / c ** 0.5


def pairwise_delta(x: torch.Tensor, y: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """δ for all pairs, ``x`` [B, D] × ``y`` [N, D] → [B, N], through one matrix product.

    ``||x - y||² = ||x||² + ||y||² - 2 x·y`` loses relative precision for nearly coincident points; use
    float64 inputs where exact ties matter (evaluation does).
    """
    c = float(curvature)
    xn = x.pow(2).sum(-1)
    yn = y.pow(2).sum(-1)
    diff2 = (xn[:, None] + yn[None, :] - 2.0 * (x @ y.T)).clamp_min(0.0)
    alpha = (1.0 - c * xn).clamp_min(BOUNDARY_EPS)
    beta = (1.0 - c * yn).clamp_min(BOUNDARY_EPS)
    return 2.0 * c * diff2 / (alpha[:, None] * beta[None, :])


def pairwise_poincare_distance(x: torch.Tensor, y: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """All-pairs distances ``x`` [B, D] × ``y`` [N, D] → [B, N]."""
    return arcosh1p(pairwise_delta(x, y, curvature)) / float(curvature) ** 0.5


def distance_to_origin(x: torch.Tensor, curvature: float = 1.0) -> torch.Tensor:
    """``d_c(0, x) = 2/sqrt(c) · artanh(sqrt(c) ||x||)`` for [..., D] points."""
    sc = float(curvature) ** 0.5
    return 2.0 / sc * torch.atanh((sc * x.norm(dim=-1)).clamp(max=1.0 - BOUNDARY_EPS))
