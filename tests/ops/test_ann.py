"""The approximate top-k cosine operator (IVF cells by FAISS k-means, searched as block products): the exact
operator's contract, high recall on clustered data."""

from __future__ import annotations

import pytest
import torch

from hyperrag.ops.ann import approximate_topk_cosine_neighbors
from hyperrag.ops.knn import topk_cosine_neighbors

pytest.importorskip("faiss")


@pytest.fixture(autouse=True)
def one_thread():
    """Small blocks: one torch thread (on a busy 2-core machine OpenMP wake-ups cost more than the products)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def clustered(n: int, dim: int = 32, centres: int = 40, spread: float = 0.3, seed: int = 0) -> torch.Tensor:
    """FloatTensor [n, dim]: unit vectors around ``centres`` random directions (entity names are clustered too)."""
    g = torch.Generator().manual_seed(seed)
    c = torch.nn.functional.normalize(torch.randn(centres, dim, generator=g), dim=1)
    x = c[torch.randint(centres, (n,), generator=g)] + spread * torch.randn(n, dim, generator=g) / dim**0.5
    return torch.nn.functional.normalize(x, dim=1)


def neighbour_sets(src: torch.Tensor, dst: torch.Tensor, n: int) -> list[set[int]]:
    out: list[set[int]] = [set() for _ in range(n)]
    for a, b in zip(src.tolist(), dst.tolist()):
        out[a].add(b)
    return out


def test_same_contract_and_high_recall_against_exact():
    x = clustered(2000)
    k = 10
    src, dst, sim = approximate_topk_cosine_neighbors(x, k, -1.0, list_size=100, nprobe=4, refine_rounds=1)
    assert src.dtype == dst.dtype == torch.long and sim.dtype == x.dtype
    assert src.shape == dst.shape == sim.shape
    assert bool((src[1:] >= src[:-1]).all()), "src ascending"
    assert bool((src != dst).all()), "self excluded"
    assert torch.bincount(src, minlength=len(x)).max() <= k
    torch.testing.assert_close(sim, (x[src] * x[dst]).sum(1), atol=1e-5, rtol=0)  # exact similarities
    for a in range(0, len(x), 97):  # each row's neighbours best first
        row = sim[src == a]
        assert bool((row[1:] <= row[:-1]).all())
    e_src, e_dst, _ = topk_cosine_neighbors(x, k, -1.0)
    found, truth = neighbour_sets(src, dst, len(x)), neighbour_sets(e_src, e_dst, len(x))
    recall = sum(len(f & t) for f, t in zip(found, truth)) / sum(map(len, truth))
    assert recall >= 0.95, recall


def test_threshold_and_exclude_self_are_honoured():
    x = clustered(1500, seed=1)
    _, _, sim = approximate_topk_cosine_neighbors(x, 5, 0.9, list_size=100, nprobe=4)
    assert len(sim) and bool((sim >= 0.9).all())
    _, _, every = approximate_topk_cosine_neighbors(x, 5, -1.0, list_size=100, nprobe=4)
    assert len(every) == 5 * len(x) > len(sim)  # the threshold removed pairs
    s_self, d_self, v_self = approximate_topk_cosine_neighbors(x, 3, -1.0, exclude_self=False, list_size=100, nprobe=4)
    first = torch.searchsorted(s_self, torch.arange(len(x)))
    assert torch.equal(d_self[first], torch.arange(len(x)))  # with self kept, each row's best is itself
    torch.testing.assert_close(v_self[first], torch.ones(len(x)), atol=1e-5, rtol=0)
    assert bool((approximate_topk_cosine_neighbors(x, 3, -1.0, list_size=100, nprobe=4)[0] != -1).all())


def test_duplicate_rows_and_small_inputs():
    x = clustered(400, seed=2)
    x = torch.cat([x, x[:50]])  # 50 exact duplicates: a row's twin is its best neighbour, itself is still dropped
    src, dst, _ = approximate_topk_cosine_neighbors(x, 4, -1.0, list_size=50, nprobe=8)
    assert bool((src != dst).all()) and torch.bincount(src, minlength=len(x)).max() <= 4
    twins = {(a, b) for a, b in zip(src.tolist(), dst.tolist())}
    assert all((i, 400 + i) in twins and (400 + i, i) in twins for i in range(50))
    one = approximate_topk_cosine_neighbors(x[:1], 3, list_size=50, nprobe=8)
    assert all(t.numel() == 0 for t in one)  # a single row has no neighbour but itself
    small = approximate_topk_cosine_neighbors(x[:20], 3, -1.0, list_size=50, nprobe=8)  # one cell: exact
    exact = topk_cosine_neighbors(x[:20], 3, -1.0)
    assert torch.equal(small[0], exact[0]) and set(zip(*[t.tolist() for t in small[:2]])) == set(
        zip(*[t.tolist() for t in exact[:2]]))
