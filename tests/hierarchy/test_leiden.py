"""Leiden behind one interface: partitions, modularity, determinism, edge cases, every backend."""

import pytest
import torch

from hyperrag.hierarchy.leiden import canonical_labels, leiden, modularity, resolve_backend
from tests.conftest import onlyCUDA, withPackage
from tests.hierarchy.graphs import planted_partition

CPU_BACKENDS = [pytest.param("graspologic", marks=withPackage("graspologic_native")),
                pytest.param("leidenalg", marks=withPackage("leidenalg", "igraph"))]


@pytest.fixture(scope="module")
def planted():
    return planted_partition([30, 25, 35, 20], p_in=0.4, p_out=0.01, seed=1)


def same_partition(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.equal(canonical_labels(a), canonical_labels(b))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_recovers_planted_partition(planted, backend):
    edge_index, weight, block = planted
    part = leiden(edge_index, weight, block.shape[0], seed=0, backend=backend)
    assert part.backend == backend
    assert part.membership.dtype == torch.long and part.membership.shape == block.shape
    assert same_partition(part.membership, block)
    assert part.modularity > 0.5
    assert part.modularity == pytest.approx(modularity(edge_index, weight, block, block.shape[0]))


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_same_seed_same_partition(backend):
    # a noisy graph on which different seeds do find different partitions
    edge_index, weight, block = planted_partition([20] * 6, p_in=0.2, p_out=0.05, seed=3)
    runs = [leiden(edge_index, weight, block.shape[0], seed=7, backend=backend).membership for _ in range(3)]
    assert all(torch.equal(runs[0], r) for r in runs[1:])


@withPackage("igraph")
def test_modularity_matches_igraph():
    import igraph as ig

    gen = torch.Generator().manual_seed(0)
    edge_index, _, _ = planted_partition([15, 15, 10], p_in=0.3, p_out=0.05, seed=2)
    weight = torch.rand(edge_index.shape[1], generator=gen) + 0.1
    memb = torch.randint(0, 4, (40,), generator=gen)
    g = ig.Graph(n=40, edges=edge_index.T.tolist())
    for res in (1.0, 0.5, 2.0):
        expected = g.modularity(memb.tolist(), weights=weight.double().tolist(), resolution=res)
        assert modularity(edge_index, weight, memb, 40, res) == pytest.approx(expected, abs=1e-12)


def test_edge_cases():
    # isolated nodes become singletons, self loops are dropped, duplicate (and reversed) edges are summed
    edge_index = torch.tensor([[0, 1, 2, 1, 5, 4, 3], [1, 2, 0, 0, 4, 5, 3]])
    part = leiden(edge_index, None, 8, seed=0, backend="cpu")
    memb = part.membership
    assert memb.shape == (8,)
    assert memb[0] == memb[1] == memb[2] and memb[4] == memb[5] and memb[0] != memb[4]
    assert len({int(memb[3]), int(memb[6]), int(memb[7])}) == 3  # isolated (3 only had a self loop)
    assert memb.tolist() == canonical_labels(memb).tolist() and memb[0] == 0
    # no edges at all
    assert leiden(torch.empty(2, 0, dtype=torch.long), None, 4).membership.tolist() == [0, 1, 2, 3]
    assert leiden(torch.empty(2, 0, dtype=torch.long), None, 0).membership.numel() == 0
    # duplicate edges = one edge of the summed weight
    dup = torch.tensor([[0, 1, 0], [1, 0, 2]])
    assert modularity(dup, torch.tensor([1.0, 1.0, 2.0]), torch.tensor([0, 0, 1]), 3) == pytest.approx(
        modularity(torch.tensor([[0, 0], [1, 2]]), torch.tensor([2.0, 2.0]), torch.tensor([0, 0, 1]), 3))


def test_bad_input():
    with pytest.raises(ValueError, match="unknown Leiden backend"):
        leiden(torch.tensor([[0], [1]]), None, 2, backend="magic")
    with pytest.raises(ValueError, match="non-negative"):
        leiden(torch.tensor([[0], [1]]), torch.tensor([-1.0]), 2, backend="cpu")
    with pytest.raises(ValueError, match="outside"):
        leiden(torch.tensor([[0], [5]]), None, 2, backend="cpu")


def test_canonical_labels():
    assert canonical_labels(torch.tensor([7, 7, 3, 9, 3])).tolist() == [0, 0, 1, 2, 1]


@withPackage("graspologic_native")
def test_cpu_prefers_graspologic():
    assert resolve_backend("cpu") == "graspologic"


@onlyCUDA
@withPackage("cugraph", "cudf", "cupy")
def test_cugraph_backend(planted):
    edge_index, weight, block = planted
    part = leiden(edge_index.cuda(), weight.cuda(), block.shape[0], seed=0, backend="cugraph")
    assert part.backend == "cugraph" and part.membership.device.type == "cpu"
    assert part.modularity > 0.5
    assert same_partition(part.membership, block)
    again = leiden(edge_index.cuda(), weight.cuda(), block.shape[0], seed=0, backend="cugraph")
    assert torch.equal(part.membership, again.membership)
    assert resolve_backend("auto") == "cugraph"
