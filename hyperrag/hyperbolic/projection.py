"""Map Euclidean (sentence) embeddings into the Poincaré ball — the same map for passages and queries.

The map is ``x = projx(expmap0(s · P(e − μ)))``:

* ``μ`` — the mean of the fitted embeddings (``center=True``). Sentence embeddings sit in a narrow cone;
  centring spreads them over all directions of the ball and leaves pairwise differences unchanged.
* ``P`` — optional PCA to ``dim`` < input dimensions (the top principal axes of the centred embeddings);
  the identity otherwise.
* ``s`` — one scalar chosen so the mean hyperbolic distance from the origin is ``init_radius``: for
  ``v = s·P(e−μ)``, ``d(0, expmap0(v)) = 2‖v‖`` for every curvature, hence
  ``s = init_radius / (2 mean‖P(e−μ)‖)``.
* ``expmap0`` (geoopt) then ``projx`` keep every point strictly inside the ball.

Near the origin the ball is conformal with factor 2, so for a small ``init_radius`` hyperbolic distances are
≈ ``2s·‖e_i − e_j‖`` and, for unit-norm embeddings, rank neighbours exactly like cosine similarity:
the initial hyperbolic geometry loses nothing that dense retrieval had. Larger radii let training spread the
hierarchy towards the boundary. The fitted ``μ``, ``P`` and ``s`` are buffers, saved with the checkpoint,
so queries are mapped the same way at retrieval time.
"""

from __future__ import annotations

import geoopt
import torch
from torch import nn


class EuclideanToBall(nn.Module):
    """Fitted affine map + ``expmap0`` from R^input_dim into the ``dim``-dimensional Poincaré ball.

    Args:
        input_dim: dimension of the Euclidean embeddings.
        dim: dimension of the ball (``None``: ``input_dim``; smaller: PCA).
        curvature: ``c`` of the target ``PoincareBall``.
    """

    def __init__(self, input_dim: int, dim: int | None = None, curvature: float = 1.0) -> None:
        super().__init__()
        self.input_dim = int(input_dim)
        self.dim = int(dim or input_dim)
        if self.dim > self.input_dim:
            raise ValueError(f"dim {self.dim} exceeds the embedding dimension {self.input_dim}")
        self.manifold = geoopt.PoincareBall(c=curvature)
        self.register_buffer("mean", torch.zeros(self.input_dim))
        self.register_buffer("components", torch.eye(self.input_dim)[:, : self.dim].clone())
        self.register_buffer("scale", torch.tensor(1.0))

    @torch.no_grad()
    def fit(self, embeddings: torch.Tensor, init_radius: float = 1.0, center: bool = True) -> EuclideanToBall:
        """Fit ``μ``, ``P`` and ``s`` on [N, input_dim] embeddings; returns ``self``."""
        e = embeddings.to(self.mean.device, torch.float32)
        if e.ndim != 2 or e.shape[1] != self.input_dim:
            raise ValueError(f"expected embeddings [N, {self.input_dim}], got {tuple(e.shape)}")
        self.mean.copy_(e.mean(0) if center else torch.zeros_like(self.mean))
        centred = e - self.mean
        if self.dim < self.input_dim:
            # right singular vectors = principal axes; sign fixed for reproducibility
            _, _, vh = torch.linalg.svd(centred, full_matrices=False)
            comps = vh[: self.dim].T
            comps = comps * torch.where(comps.sum(0) < 0, -1.0, 1.0)
            self.components.copy_(comps)
        reduced = centred @ self.components
        mean_norm = reduced.norm(dim=1).mean().clamp_min(1e-12)
        self.scale.fill_(float(init_radius) / (2.0 * float(mean_norm)))
        return self

    def tangent(self, embeddings: torch.Tensor) -> torch.Tensor:
        """The tangent vector at the origin, ``s · P(e − μ)``: [..., input_dim] → [..., dim]."""
        e = embeddings.to(self.mean.device, self.mean.dtype)
        return self.scale * ((e - self.mean) @ self.components)

    def forward(self, embeddings: torch.Tensor) -> torch.Tensor:
        """[..., input_dim] Euclidean embeddings → [..., dim] points strictly inside the ball."""
        return self.manifold.projx(self.manifold.expmap0(self.tangent(embeddings)))
