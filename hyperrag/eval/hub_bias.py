"""Hub-bias analysis of PPR retrieval (CatRAG §6.1, Eq. 4, Fig. 2): does the walk drain into high-degree hubs?

Per query, over its top-``top`` entity nodes by PPR mass ``V_top``:

* ``s_ppr`` — PPR-weighted strength ``Σ_{v ∈ V_top} p̂(v) · Strength(v)``, with ``p̂`` the PPR mass re-normalised
  over ``V_top`` and ``Strength`` the weighted degree (Eq. 4);
* ``hub_mass`` — the share of that re-normalised top mass sitting on super-hubs (nodes in the top 1% of
  strength among entities);
* ``hub_mass_all`` — the share of *all* the query's entity mass on super-hubs.

Compare methods with one ``strength`` computed on one shared static graph, so that a method's own re-weighting
does not change the yardstick.
"""

from __future__ import annotations

from pathlib import Path

import torch

from hyperrag.utils.plotting import pyplot, save_figure


def node_strength(edge_index: torch.Tensor, edge_weight: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Weighted degree [N] of an undirected edge list [2, M]."""
    strength = torch.zeros(num_nodes, dtype=edge_weight.dtype)
    strength.index_add_(0, edge_index[0], edge_weight)
    strength.index_add_(0, edge_index[1], edge_weight)
    return strength


def hub_bias(ppr: torch.Tensor, strength: torch.Tensor, num_entities: int, top: int = 10,
             hub_quantile: float = 0.99) -> dict[str, torch.Tensor]:
    """Args:
        ppr: [B, N] PPR distributions (entity nodes first).
        strength: [N] weighted degree on the shared static graph.
        num_entities: entity nodes are ``0..num_entities-1``.
        top: size of ``V_top``; hub_quantile: strength quantile above which an entity is a super-hub.
    Returns:
        ``{"s_ppr": [B], "hub_mass": [B], "hub_mass_all": [B]}`` (float64).
    """
    ent = ppr[:, :num_entities].double().cpu()
    deg = strength[:num_entities].double().cpu()
    val, idx = torch.topk(ent, min(top, num_entities), dim=1)
    top_mass = val.sum(1).clamp_min(1e-300)
    s_ppr = (val * deg[idx]).sum(1) / top_mass
    hubs = deg >= torch.quantile(deg, hub_quantile)
    hub_mass = (val * hubs[idx]).sum(1) / top_mass
    hub_mass_all = ent[:, hubs].sum(1) / ent.sum(1).clamp_min(1e-300)
    return {"s_ppr": s_ppr, "hub_mass": hub_mass, "hub_mass_all": hub_mass_all}


def plot_hub_bias(results: dict[str, dict[str, torch.Tensor]], path: str | Path, title: str = "") -> Path:
    """Fig. 2's shape: per method, the distribution of ``s_ppr`` over queries with its mean as a dashed line;
    beside it the same for ``hub_mass``. Saved as PNG.

    Args:
        results: ``{method: hub_bias(...)}``.
        path: the PNG to write; title: a line above the panels (e.g. the LLM label).
    """
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    panels = (("s_ppr", "PPR-weighted strength S_ppr of the top-10 entities"),
              ("hub_mass", "share of the top-10 PPR mass on super-hubs (top 1%)"))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (key, label) in zip(axes, panels):
        values = [results[m][key].numpy() for m in results]
        lo, hi = min(v.min() for v in values), max(v.max() for v in values)
        bins = 20 if hi > lo else 1
        for (method, v), colour in zip(zip(results, values), colours):
            ax.hist(v, bins=bins, range=(lo, hi) if hi > lo else None, alpha=0.45, color=colour,
                    label=f"{method} (mean {v.mean():.3g})")
            ax.axvline(v.mean(), color=colour, linestyle="--", linewidth=1.5)
        ax.set_xlabel(label)
        ax.set_ylabel("queries")
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)
