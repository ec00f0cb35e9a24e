"""Picture of a HugRAG module hierarchy: levels as rows, modules as dots, hierarchy edges, gates highlighted.

Layout (no graph-drawing library needed): the tree is walked depth-first from its roots, largest child first;
childless modules take consecutive slots on the x axis (slot width ~ sqrt(entity count)) and a parent sits at the mean x of its children, so
every subtree occupies one contiguous band and the hierarchy edges never cross. Row y = the module's level
(top level at the top). Dot area grows with the module's entity count. Causal gates are drawn as red arcs
(same-level gates bulge above their row); the largest top-level modules are labelled with the start of
their text when ``labels`` is given.
"""

from __future__ import annotations

from pathlib import Path

import torch

from hyperrag.hierarchy.modules import ModuleTree
from hyperrag.utils.plotting import pyplot, save_figure


def tree_layout(tree: ModuleTree) -> tuple[list[float], list[int]]:
    """x position and level of every module (see the module docstring)."""
    num_m = tree.num_modules
    sizes = tree.sizes.tolist()
    parent = tree.parent.tolist()
    children: list[list[int]] = [[] for _ in range(num_m)]
    for m, p in enumerate(parent):
        if p >= 0:
            children[p].append(m)
    roots = sorted((m for m in range(num_m) if parent[m] < 0), key=lambda m: (-sizes[m], m))
    x = [0.0] * num_m
    slot = 0.0
    biggest = max(max(sizes, default=1), 1)
    for root in roots:  # iterative post-order: children placed before their parent
        stack: list[tuple[int, bool]] = [(root, False)]
        while stack:
            m, done = stack.pop()
            kids = sorted(children[m], key=lambda c: (-sizes[c], c))
            if done or not kids:
                if kids:
                    x[m] = sum(x[c] for c in kids) / len(kids)
                else:  # a slot as wide as sqrt(size): large modules spread out, the tail of tiny ones packs
                    w = (sizes[m] / biggest) ** 0.5
                    x[m] = slot + w / 2
                    slot += w
                continue
            stack.append((m, True))
            stack.extend((c, False) for c in reversed(kids))
    return x, [int(v) for v in tree.level.tolist()]


def plot_hierarchy(tree: ModuleTree, path: str | Path, gates: torch.Tensor | None = None,
                   labels: list[str] | None = None, title: str = "HugRAG module hierarchy", top_labels: int = 5,
                   label_words: int = 4) -> Path:
    """Save the picture of ``tree`` to ``path`` (PNG, parent folders created) and return the path.

    Args:
        tree: the module tree (:meth:`ModuleTree.from_hierarchy`).
        path: output image.
        gates: LongTensor [2, G] of gate module pairs (tree ids), highlighted; None or empty = no gates.
        labels: module texts; the ``top_labels`` largest top-level modules get their first ``label_words`` words.
        title: figure title (module, level and gate counts are appended).
    """
    from matplotlib.collections import LineCollection
    from matplotlib.patches import FancyArrowPatch

    plt = pyplot()

    x, level = tree_layout(tree)
    sizes = tree.sizes.float()
    parent = tree.parent.tolist()
    num_levels = max(level) if level else 0
    width = max(x) if x else 1
    fig, ax = plt.subplots(figsize=(14, 2.0 + 1.3 * max(num_levels, 1)))
    segs = [[(x[m], level[m]), (x[p], level[p])] for m, p in enumerate(parent) if p >= 0]
    if segs:
        ax.add_collection(LineCollection(segs, colors="0.7", linewidths=0.4, zorder=1))
    area = (8 + 240 * (sizes / sizes.max().clamp_min(1)).sqrt()).tolist() if len(x) else []
    cmap = plt.get_cmap("viridis")
    colors = [cmap((lv - 1) / max(num_levels - 1, 1)) for lv in level]
    ax.scatter(x, level, s=area, c=colors, edgecolors="0.2", linewidths=0.2, alpha=0.85, zorder=2)
    n_gates = 0
    if gates is not None and gates.numel():
        alpha = min(0.8, max(0.06, 40 / gates.shape[1]))  # many gates: fainter arcs, the density still shows
        lw = 1.0 if gates.shape[1] < 100 else 0.5
        for a, b in gates.t().tolist():
            n_gates += 1
            same = level[a] == level[b]
            rad = (0.35 if x[a] < x[b] else -0.35) if same else 0.1
            ax.add_patch(FancyArrowPatch((x[a], level[a]), (x[b], level[b]), arrowstyle="-", color="crimson",
                                         linewidth=lw, alpha=alpha, connectionstyle=f"arc3,rad={rad}", zorder=3))
    if labels is not None and top_labels > 0:
        tops = sorted((m for m in range(len(x)) if parent[m] < 0), key=lambda m: -float(sizes[m]))[:top_labels]
        for i, m in enumerate(sorted(tops, key=lambda m: x[m])):
            text = " ".join(labels[m].replace(";", " ").split()[:label_words])
            ax.annotate(text, (x[m], level[m]), xytext=(0, 10 + 10 * (i % 3)), textcoords="offset points",
                        ha="left", fontsize=7, rotation=12,
                        arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.4})
    ax.set_xlim(-0.5, width + 0.5)
    ax.set_ylim(0.4, num_levels + 0.9)
    ax.set_yticks(range(1, num_levels + 1))
    ax.set_yticklabels([f"H{lv}\n({sum(v == lv for v in level)})" for lv in range(1, num_levels + 1)])
    ax.set_xticks([])
    ax.set_ylabel("level (modules)")
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [plt.Line2D([], [], color="0.7", lw=1, label="hierarchy edge"),
               plt.Line2D([], [], color="crimson", lw=1.5, label=f"causal gate ({n_gates})"),
               plt.Line2D([], [], marker="o", ls="", color="0.5", label="module (area ~ entities)")]
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=False)
    ax.set_title(f"{title} — {len(x)} modules, {num_levels} levels, {n_gates} gates")
    return save_figure(fig, path, dpi=130)
