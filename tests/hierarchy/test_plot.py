"""The hierarchy picture: a non-empty PNG with modules by level and gates highlighted."""

from __future__ import annotations

import torch

from hyperrag.hierarchy.modules import ModuleTree
from hyperrag.hierarchy.plot import plot_hierarchy, tree_layout


def small_tree() -> ModuleTree:
    # entities 0..5; level-1 modules 0 {0,1}, 1 {2,3}, 2 {4,5}; level-2 module 3 = {0..3} over modules 0 and 1;
    # module 2 is a root of its own
    return ModuleTree(level=torch.tensor([1, 1, 1, 2]), parent=torch.tensor([3, 3, -1, -1]),
                      entity_ptr=torch.tensor([0, 2, 4, 6, 10]),
                      entity_idx=torch.tensor([0, 1, 2, 3, 4, 5, 0, 1, 2, 3]),
                      leaf=torch.tensor([0, 0, 1, 1, 2, 2]), level_ids=[torch.arange(3), torch.tensor([3])])


def test_layout_puts_parents_over_their_children():
    x, level = tree_layout(small_tree())
    assert level == [1, 1, 1, 2]
    assert min(x[0], x[1]) < x[3] < max(x[0], x[1]) and x[2] > max(x[0], x[1])  # subtrees occupy bands


def test_plot_hierarchy_writes_png(tmp_path):
    out = plot_hierarchy(small_tree(), tmp_path / "sub" / "hierarchy.png", gates=torch.tensor([[0, 2], [1, 3]]),
                         labels=["a b", "c d", "e f", "g h"])
    data = out.read_bytes()
    assert out.name == "hierarchy.png" and len(data) > 1000 and data[:8] == b"\x89PNG\r\n\x1a\n"


def test_gate_plot_with_two_gate_sets(tmp_path):
    from hyperrag.eval.gate_effectiveness import gate_effectiveness, plot_gate_effectiveness

    off = [{0: 0, 1: 1}, {0: 0}]
    res = {name: gate_effectiveness(on, off, [[4, 1], [3]], n_boot=20, gate_arcs=n)
           for name, on, n in (("LLM-verified", [{0: 0, 4: 1}, {0: 0}], 1), ("unverified", [{0: 0, 4: 1}, {3: 1}], 2))}
    out = plot_gate_effectiveness(res, tmp_path / "gates.png")
    assert out.stat().st_size > 1000
