"""Training objectives for Poincaré embeddings of a graph.

* ``nickel_kiela`` (Nickel & Kiela 2017, eq. 6): for a relation ``(u, v)`` and negatives ``N(u)``,
  ``-log softmax(-d(u, ·))[v]`` over ``{v} ∪ N(u)`` — pulls related nodes together *and* pushes unrelated
  ones apart, so the embedding cannot shrink to a point.
* ``edge_distance`` (the HyperRAG paper's loss): ``Σ_{(u,v)∈E} d(u, v)``. Its global minimum puts every
  node of a connected graph on one point — kept only to demonstrate that collapse (see the tests).
* anchor term: ``mean_i d(x_i, x_i^init)``, added with a configurable weight to any of the above; keeps each
  node near its semantic (sentence-embedding) initialisation.
"""

from __future__ import annotations

import torch

from hyperrag.hyperbolic.distance import BOUNDARY_EPS, DELTA_EPS

LOSSES = ("nickel_kiela", "edge_distance")


def nickel_kiela_loss(d_pos: torch.Tensor, d_neg: torch.Tensor, neg_valid: torch.Tensor | None = None
                      ) -> torch.Tensor:
    """Mean over the batch of ``d(u,v) + log(exp(-d(u,v)) + Σ_valid exp(-d(u,n)))``.

    Args:
        d_pos: [B] distances of the relations.
        d_neg: [B, k] distances of the negatives.
        neg_valid: [B, k] bool, False for candidates to leave out (true neighbours, ``u`` itself).
    """
    logits = torch.cat([-d_pos[:, None], -d_neg], dim=1)
    if neg_valid is not None:
        keep = torch.cat([torch.ones_like(neg_valid[:, :1]), neg_valid], dim=1)
        logits = logits.masked_fill(~keep, float("-inf"))
    return (torch.logsumexp(logits, dim=1) + d_pos).mean()


def edge_distance_loss(d_pos: torch.Tensor) -> torch.Tensor:
    """The plain sum of Poincaré distances over the batch's edges (collapses; for demonstration)."""
    return d_pos.sum()


def anchor_loss(d_anchor: torch.Tensor) -> torch.Tensor:
    """Mean distance of the nodes to their initial (semantic) positions."""
    return d_anchor.mean()


def _pad_rows(x: torch.Tensor, rows: int, value: float | bool = 0) -> torch.Tensor:
    return torch.cat([x, x.new_full((rows, *x.shape[1:]), value)]) if rows else x


class _GroupedNickelKiela(torch.autograd.Function):
    """Forward and analytic backward of :func:`nickel_kiela_grouped` in one autograd node.

    Negatives are handled in the grouped shape [G, g, k] by broadcasting (never repeated per source);
    ``||u - n||²`` comes from one ``baddbmm``. Per source, with ``z_j = d(u, v) - d(u, n_j)`` over the valid
    negatives and ``s = max(0, max_j z_j)``, the loss is ``s + log(exp(-s) + Σ_j exp(z_j - s))`` — the same
    ``-log softmax`` as :func:`nickel_kiela_loss`, overflow-free for any curvature. Gradients use
    ``∂δ/∂x = 4c (x - y)/(αβ) + 2cδ x/α`` and ``∂δ/∂y = 4c (y - x)/(αβ) + 2cδ y/β`` (α = 1 - c|x|²,
    β = 1 - c|y|²) and ``∂d/∂δ = 1 / (sqrt(c) sqrt(δ(δ+2)))``.
    """

    @staticmethod
    def forward(ctx, xu: torch.Tensor, xv: torch.Tensor, xn: torch.Tensor,  # type: ignore[override]
                valid: torch.Tensor | None, c: float) -> torch.Tensor:
        b, dim = xu.shape
        groups, k, _ = xn.shape
        g = -(-b // groups)
        pad = groups * g - b
        sc = c ** 0.5
        xu_g = _pad_rows(xu, pad).view(groups, g, dim)
        un = xu_g.pow(2).sum(-1, keepdim=True)  # [G, g, 1]
        nn_ = xn.pow(2).sum(-1).unsqueeze(1)  # [G, 1, k]
        inv_alpha = 1.0 / (1.0 - c * un).clamp_min(BOUNDARY_EPS)
        inv_beta_n = 1.0 / (1.0 - c * nn_).clamp_min(BOUNDARY_EPS)
        # positives, exact difference form: [B]
        diff_uv = xu - xv
        inv_beta_v = 1.0 / (1.0 - c * xv.pow(2).sum(-1)).clamp_min(BOUNDARY_EPS)
        delta_p = 2.0 * c * diff_uv.pow(2).sum(-1) * inv_alpha.view(-1)[:b] * inv_beta_v
        delta_p = delta_p.clamp_min(DELTA_EPS)
        root_p = torch.sqrt(delta_p * (delta_p + 2.0))
        d_pos = torch.log1p(delta_p + root_p) / sc
        # negatives: [G, g, k]
        delta_n = torch.baddbmm(un + nn_, xu_g, xn.transpose(1, 2), alpha=-2.0).clamp_min_(0.0)
        delta_n.mul_(inv_alpha * (2.0 * c)).mul_(inv_beta_n).clamp_min_(DELTA_EPS)
        root_n = torch.sqrt(delta_n * (delta_n + 2.0))
        z = _pad_rows(d_pos, pad).view(groups, g, 1) - torch.log1p(delta_n + root_n).div_(sc)
        if valid is not None:
            z.masked_fill_(~_pad_rows(valid, pad, False).view(groups, g, k), float("-inf"))
        elif pad:
            z.view(-1, k)[b:] = float("-inf")
        shift = z.amax(-1, keepdim=True).clamp_min_(0.0)  # [G, g, 1]
        e = torch.exp(z.sub_(shift))  # exp(z - s), zero for masked negatives
        denom = torch.exp(-shift).add_(e.sum(-1, keepdim=True))
        loss = (shift + torch.log(denom)).view(-1)[:b].sum() / b
        ctx.c, ctx.b = c, b
        ctx.save_for_backward(xu_g, xv, xn, diff_uv, inv_alpha, inv_beta_n, inv_beta_v, delta_p, root_p,
                              delta_n, root_n, e, denom)
        return loss

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        (xu_g, xv, xn, diff_uv, inv_alpha, inv_beta_n, inv_beta_v, delta_p, root_p, delta_n, root_n, e,
         denom) = ctx.saved_tensors
        c, b = ctx.c, ctx.b
        dim = xu_g.shape[-1]
        sc = c ** 0.5
        # softmax weights of the negatives, scaled by the incoming gradient and the batch mean
        p = e * (grad / b / denom)  # [G, g, k]; ∂loss/∂d(u, n_j) = -p_j, ∂loss/∂d(u, v) = Σ_j p_j
        gd_pos = p.sum(-1).view(-1)[:b]
        # negatives: g_δ = -p / (sqrt(c) root)
        g_delta = p.div_(root_n).mul_(-1.0 / sc)
        w = g_delta * inv_alpha * inv_beta_n * (4.0 * c)  # coefficient of (u - n), [G, g, k]
        q = g_delta.mul_(delta_n).mul_(2.0 * c)  # [G, g, k]
        coef_u = w.sum(-1, keepdim=True) + q.sum(-1, keepdim=True) * inv_alpha  # [G, g, 1]
        grad_u = (coef_u * xu_g - torch.bmm(w, xn)).view(-1, dim)[:b]
        grad_n = (q.mul_(inv_beta_n).add_(w)).sum(1).unsqueeze(-1) * xn - torch.bmm(w.transpose(1, 2), xu_g)
        # the positive: exact form
        gdp = gd_pos / (sc * root_p)
        inv_alpha_b = inv_alpha.view(-1)[:b]
        wp = (gdp * inv_alpha_b * inv_beta_v * (4.0 * c)).unsqueeze(1)
        qp = gdp * delta_p * (2.0 * c)
        xu = xu_g.view(-1, dim)[:b]
        grad_u = grad_u + wp * diff_uv + (qp * inv_alpha_b).unsqueeze(1) * xu
        grad_v = (qp * inv_beta_v).unsqueeze(1) * xv - wp * diff_uv
        return grad_u, grad_v, grad_n, None, None


def nickel_kiela_grouped(xu: torch.Tensor, xv: torch.Tensor, xn: torch.Tensor, valid: torch.Tensor | None,
                         curvature: float = 1.0) -> torch.Tensor:
    """:func:`nickel_kiela_loss` straight from the points, with group-shared negatives and a fused backward.

    Equal (values and gradients, see the tests) to
    ``nickel_kiela_loss(poincare_distance(xu, xv), grouped_distance(xu, xn), valid)``, in one autograd node.

    Args:
        xu: [B, D] sources; xv: [B, D] their related nodes.
        xn: [G, k, D] negatives shared by consecutive groups of ``ceil(B / G)`` sources.
        valid: [B, k] bool mask of usable negatives (or None).
        curvature: ``c``.
    """
    return _GroupedNickelKiela.apply(xu, xv, xn, valid, float(curvature))
