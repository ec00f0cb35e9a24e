"""Small graphs shared by the hyperbolic tests (single-threaded torch: these ops are tiny)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def small_tree():
    """Closure of the binary tree of depth 4: 31 nodes, 98 relations."""
    from hyperrag.hyperbolic.graphs import tree_closure, tree_size

    return tree_closure(2, 4), tree_size(2, 4)
