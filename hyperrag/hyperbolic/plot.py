"""Poincaré-disk pictures of an embedding: nodes, geodesic edges, the boundary circle (matplotlib, Agg).

A 2-D model is drawn as is. Higher dimensions are shown through the two principal axes of the points
(about the origin, which is meaningful in the ball) with each point rescaled to its true norm, so its
distance from the centre — its depth in the hierarchy — is exact and only the angles are projected.
Edges are geodesics sampled in the full-dimensional ball (``PoincareBall.geodesic``) and projected the
same way, so in 2-D they are the true circular arcs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import geoopt
import torch

from hyperrag.hyperbolic.distance import distance_to_origin
from hyperrag.utils.plotting import pyplot, save_figure


def disk_coordinates(points: torch.Tensor, basis: torch.Tensor | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """[..., D] points → [..., 2] disk coordinates and the [D, 2] basis used (norms preserved)."""
    x = points.detach().float().cpu()
    flat = x.reshape(-1, x.shape[-1])
    if x.shape[-1] == 2:
        return x, torch.eye(2)
    if basis is None:
        _, _, vh = torch.linalg.svd(flat, full_matrices=False)  # uncentred: axes through the origin
        basis = vh[:2].T
    y = flat @ basis
    scale = flat.norm(dim=1, keepdim=True) / y.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return (y * scale).reshape(*x.shape[:-1], 2), basis


def plot_poincare_disk(points: torch.Tensor, path: str | Path, edges: torch.Tensor | None = None,
                       curvature: float = 1.0, colors: Sequence[float] | torch.Tensor | None = None,
                       labels: Sequence[str] | None = None, title: str | None = None, max_edges: int = 3000,
                       geodesic_steps: int = 16, seed: int = 0, colorbar_label: str | None = None) -> Path:
    """Save a PNG of the embedding in the Poincaré disk.

    Args:
        points: [N, D] points of the ball.
        path: output PNG path (parents created).
        edges: optional LongTensor [2, E]; at most ``max_edges`` (a fixed random subset) are drawn.
        curvature: ``c``; the disk has radius ``1/sqrt(c)``.
        colors: per-node values for the colour map (e.g. depth); default the distance from the origin.
        colorbar_label: the colour bar's label (default: "distance from the origin" when ``colors`` is None).
        labels: per-node text, drawn when there are at most 60 nodes.
        title: figure title.
        geodesic_steps: points sampled along each edge.
    """
    from matplotlib.collections import LineCollection

    plt = pyplot()

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pts = points.detach().float().cpu()
    ball = geoopt.PoincareBall(c=curvature)
    xy, basis = disk_coordinates(pts)
    radius = 1.0 / curvature ** 0.5
    fig, ax = plt.subplots(figsize=(7, 7), dpi=110)
    ax.add_patch(plt.Circle((0, 0), radius, fill=False, color="black", lw=1.0))
    if edges is not None and edges.numel():
        e = edges.detach().cpu()
        if e.shape[1] > max_edges:
            keep = torch.randperm(e.shape[1], generator=torch.Generator().manual_seed(seed))[:max_edges]
            e = e[:, keep]
        t = torch.linspace(0.0, 1.0, geodesic_steps).view(1, -1, 1)
        with torch.no_grad():
            a, b = pts[e[0]].unsqueeze(1), pts[e[1]].unsqueeze(1)
            curve = ball.geodesic(t, a, b)  # [E, steps, D]
        curve_xy, _ = disk_coordinates(curve, basis)
        ax.add_collection(LineCollection(curve_xy.numpy(), colors="tab:gray", linewidths=0.4, alpha=0.35))
    if colors is None:
        colors = distance_to_origin(pts, curvature)
        colorbar_label = colorbar_label or "distance from the origin"
    c = torch.as_tensor(colors, dtype=torch.float32).numpy()
    size = max(2.0, 400.0 / len(pts) ** 0.5)
    sc = ax.scatter(xy[:, 0].numpy(), xy[:, 1].numpy(), c=c, cmap="viridis", s=size, zorder=3,
                    edgecolors="none")
    fig.colorbar(sc, ax=ax, fraction=0.04, pad=0.02).set_label(colorbar_label)
    if labels is not None and len(pts) <= 60:
        for (x0, y0), text in zip(xy.tolist(), labels):
            ax.annotate(text[:28], (x0, y0), fontsize=6, xytext=(2, 2), textcoords="offset points")
    ax.set_xlim(-radius * 1.03, radius * 1.03)
    ax.set_ylim(-radius * 1.03, radius * 1.03)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return save_figure(fig, path, dpi=None)
