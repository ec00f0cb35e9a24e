"""Poincaré-disk plots are written as PNG files."""

import torch

from hyperrag.hyperbolic.graphs import tree_depths, tree_edges, tree_size
from hyperrag.hyperbolic.plot import disk_coordinates, plot_poincare_disk


def test_plot_2d_and_projected(tmp_path):
    n = tree_size(2, 3)
    gen = torch.Generator().manual_seed(0)
    for dim in (2, 10):
        pts = torch.nn.functional.normalize(torch.randn(n, dim, generator=gen), dim=1) * 0.8
        path = plot_poincare_disk(pts, tmp_path / f"d{dim}" / "disk.png", edges=tree_edges(2, 3),
                                  colors=tree_depths(2, 3), labels=[str(i) for i in range(n)], title="t")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_projection_keeps_norms():
    pts = torch.randn(30, 6) * 0.1
    xy, basis = disk_coordinates(pts)
    assert basis.shape == (6, 2)
    torch.testing.assert_close(xy.norm(dim=1), pts.norm(dim=1))
