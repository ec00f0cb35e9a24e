"""hyperrag.graph.utils: PyG's coalescing and CSR utilities under the framework's conventions, checked against
plain-Python references on random graphs."""

from __future__ import annotations

import pytest
import torch

from hyperrag.graph import utils


def _random_edges(seed: int, n: int = 40, m: int = 300) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    index = torch.randint(0, n, (2, m), generator=g)
    weight = torch.randint(1, 5, (m,), generator=g).float()  # integer weights: sums are exact in any order
    return index, weight


@pytest.mark.parametrize("reduce", ["sum", "max", "amax"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_undirected_edges_match_a_dict_reference(seed: int, reduce: str) -> None:
    index, weight = _random_edges(seed)
    ref: dict[tuple[int, int], float] = {}
    for u, v, w in zip(*index.tolist(), weight.tolist()):
        if u == v:
            continue
        key = (min(u, v), max(u, v))
        ref[key] = ref.get(key, 0.0) + w if reduce == "sum" else max(ref.get(key, float("-inf")), w)
    out, w = utils.undirected_edges(index, weight, 40, reduce)
    assert bool((out[0] < out[1]).all())
    assert [tuple(e) for e in out.T.tolist()] == sorted(ref)  # sorted by (u, v), one per pair
    assert w.tolist() == [ref[k] for k in sorted(ref)]


def test_coalesce_keeps_direction_and_both_directions_is_symmetric() -> None:
    index = torch.tensor([[0, 1, 0, 2], [1, 0, 1, 2]])
    weight = torch.tensor([1.0, 2.0, 3.0, 4.0])
    out, w = utils.coalesce_edges(index, weight, 3, "sum")
    assert out.tolist() == [[0, 1, 2], [1, 0, 2]] and w.tolist() == [4.0, 2.0, 4.0]
    both, bw = utils.both_directions(torch.tensor([[0, 1], [1, 2]]), torch.tensor([0.5, 0.75]), 3, "max")
    assert both.tolist() == [[0, 1, 1, 2], [1, 0, 2, 1]] and bw.tolist() == [0.5, 0.5, 0.75, 0.75]


def test_empty_inputs_keep_their_shapes() -> None:
    empty = torch.empty(2, 0, dtype=torch.long)
    for fn in (utils.undirected_edges, utils.coalesce_edges, utils.both_directions):
        out, w = fn(empty, torch.empty(0), 5)
        assert out.shape == (2, 0) and w.shape == (0,)
    ptr, idx = utils.csr_from_pairs(torch.empty(0, dtype=torch.long), torch.empty(0, dtype=torch.long), 3, 4)
    assert ptr.tolist() == [0, 0, 0, 0] and idx.numel() == 0


def test_csr_helpers_agree_with_python_lists() -> None:
    rows = [[3, 1], [], [0, 0, 2], [5]]
    ptr, idx = utils.csr_from_lists(rows)
    assert ptr.tolist() == [0, 2, 2, 5, 6] and idx.tolist() == [3, 1, 0, 0, 2, 5]
    assert utils.csr_owner(ptr).tolist() == [0, 0, 2, 2, 2, 3]
    assert torch.equal(utils.ptr_from_sorted_rows(utils.csr_owner(ptr), 4), ptr)
    assert torch.equal(utils.ptr_from_counts(torch.tensor([2, 0, 3, 1])), ptr)
    owner, value = torch.tensor([2, 0, 2, 1, 0]), torch.tensor([7, 4, 1, 3, 2])
    ptr, idx = utils.csr_from_pairs(owner, value, 4, 8)
    assert ptr.tolist() == [0, 2, 3, 5, 5] and idx.tolist() == [2, 4, 3, 1, 7]  # ascending within a row


def test_sort_typed_edges_orders_by_type_then_pair() -> None:
    index = torch.tensor([[2, 0, 1, 0], [3, 3, 2, 1]])
    weight = torch.tensor([1.0, 2.0, 3.0, 4.0])
    etype = torch.tensor([0, 1, 0, 0], dtype=torch.uint8)
    out, w, t = utils.sort_typed_edges(index, weight, etype, 4)
    assert out.tolist() == [[0, 1, 2, 0], [1, 2, 3, 3]]
    assert w.tolist() == [4.0, 3.0, 1.0, 2.0] and t.tolist() == [0, 0, 0, 1]


@pytest.mark.parametrize("seed", [0, 1])
def test_distinct_edges_keep_self_loops_and_match_unique_keys(seed: int) -> None:
    index, _ = _random_edges(seed, n=12, m=200)  # many repeats and self loops
    keys = index[0] * 12 + index[1]
    out = utils.distinct_edges(index, 12)
    assert torch.equal(out[0] * 12 + out[1], torch.unique(keys))  # sorted by (row, col), self loops kept
    both = utils.distinct_edges(index, 12, both_ways=True)
    assert torch.equal(both[0] * 12 + both[1], torch.unique(torch.cat([keys, index[1] * 12 + index[0]])))
    bipartite = torch.tensor([[0, 0, 1, 0], [5, 5, 0, 0]])  # rows < 2, cols < 6: (0, 0) is a pair like any other
    assert utils.distinct_edges(bipartite, 6).tolist() == [[0, 0, 1], [0, 5, 0]]
    assert utils.distinct_edges(torch.empty(2, 0, dtype=torch.long), 3).shape == (2, 0)


def test_with_reverse_keeps_parallel_arcs_and_order() -> None:
    index = torch.tensor([[0, 0, 2], [1, 1, 2]])
    kind = torch.tensor([3, 4, 5], dtype=torch.int8)
    arcs, k = utils.with_reverse(index, kind)
    assert arcs.tolist() == [[0, 0, 2, 1, 1, 2], [1, 1, 2, 0, 0, 2]] and k.tolist() == [3, 4, 5, 3, 4, 5]
    (only,) = utils.with_reverse(index)
    assert torch.equal(only, arcs)
