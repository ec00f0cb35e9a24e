import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperrag.graph.canonical import canonical_name
from hyperrag.ops.knn import topk_cosine_neighbors


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 40), k=st.integers(1, 6), block=st.integers(1, 9), thr=st.floats(-1, 0.9))
def test_blockwise_topk_matches_dense(n, k, block, thr):
    g = torch.Generator().manual_seed(n * 31 + k)
    x = torch.nn.functional.normalize(torch.randn(n, 8, generator=g), dim=1)
    src, dst, sim = topk_cosine_neighbors(x, k, thr, block_rows=block)
    full = x @ x.T
    full.fill_diagonal_(float("-inf"))
    val, nbr = torch.topk(full, min(k, n - 1), dim=1)
    expected = {(i, int(j)) for i in range(n) for j, v in zip(nbr[i], val[i]) if v >= thr}
    assert set(zip(src.tolist(), dst.tolist())) == expected
    assert torch.allclose(sim, full[src, dst], atol=1e-6)  # a row block and the full product round apart near 0
    assert bool((src != dst).all())


def test_canonical_name():
    assert canonical_name("  Marie  Curie's ") == "marie curie s"
    assert canonical_name("ÉCOLE—Normale") == "école normale"


def test_row_range_shards_reassemble_the_full_result():
    import torch

    from hyperrag.ops.knn import topk_cosine_neighbors

    g = torch.Generator().manual_seed(3)
    x = torch.nn.functional.normalize(torch.randn(97, 8, generator=g), dim=1)
    full = topk_cosine_neighbors(x, k=4, threshold=0.1, block_rows=10)
    parts = [topk_cosine_neighbors(x, k=4, threshold=0.1, block_rows=10, row_range=(a, b))
             for a, b in ((0, 30), (30, 30), (30, 97))]  # shard edges on block edges: same products
    for i in range(3):
        assert torch.equal(torch.cat([p[i] for p in parts]), full[i])
    assert topk_cosine_neighbors(x, k=4, row_range=(5, 9))[0].unique().tolist() == [5, 6, 7, 8]
