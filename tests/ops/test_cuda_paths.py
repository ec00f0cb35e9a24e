"""The CUDA paths of the shared operators give the CPU's results (run with ``python -m pytest -m gpu``)."""

from __future__ import annotations

import torch

from hyperrag.ops.knn import topk_cosine_neighbors
from hyperrag.seeding.mmr import mmr_select
from tests.conftest import onlyCUDA


def _unit(n: int, d: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.nn.functional.normalize(torch.randn(n, d, generator=g), dim=1)


@onlyCUDA
def test_knn_on_cuda_finds_the_cpu_neighbours():
    x = _unit(3000, 384, 0)
    x[1500:1600] = torch.nn.functional.normalize(x[:100] + 0.1 * _unit(100, 384, 1), dim=1)  # near-duplicates
    for kw in ({"k": 10}, {"k": 5, "threshold": 0.5}, {"k": 10, "row_range": (100, 2100), "block_rows": 333}):
        src_c, dst_c, sim_c = topk_cosine_neighbors(x, **kw)
        src_g, dst_g, sim_g = topk_cosine_neighbors(x.cuda(), **kw)
        assert src_g.is_cuda and dst_g.is_cuda
        assert torch.equal(src_g.cpu(), src_c) and torch.equal(dst_g.cpu(), dst_c)
        assert torch.allclose(sim_g.cpu(), sim_c, atol=1e-5)
    src, dst, _ = topk_cosine_neighbors(x.cuda(), k=1, threshold=0.9)
    assert set(zip(src.tolist(), dst.tolist())) >= {(i, 1500 + i) for i in range(100)}


@onlyCUDA
def test_mmr_on_cuda_selects_what_the_cpu_selects():
    emb = _unit(500, 64, 2)
    rel = emb[[7, 8, 9]] @ emb.T  # [3 queries, 500 items]
    for lam in (1.0, 0.7, 0.3):
        idx_c, rel_c = mmr_select(rel, emb, 10, lam=lam)
        idx_g, rel_g = mmr_select(rel.cuda(), emb.cuda(), 10, lam=lam)
        assert idx_g.is_cuda and torch.equal(idx_g.cpu(), idx_c)
        assert torch.allclose(rel_g.cpu(), rel_c, atol=1e-5)
