"""Hub-bias analysis of PPR retrieval (CatRAG §analysis): does the walk drain into high-degree hubs?

* ``s_ppr`` — PPR-weighted mean weighted degree (strength) of each query's top-10 entities;
* ``hub_mass`` — share of the query's entity PPR mass sitting on super-hubs (top 1% strength).
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
        strength: [N] weighted degree.
        num_entities: entity nodes are ``0..num_entities-1``.
    Returns:
        ``{"s_ppr": [B], "hub_mass": [B]}``.
    """
    ent = ppr[:, :num_entities].double().cpu()
    deg = strength[:num_entities].double().cpu()
    val, idx = torch.topk(ent, min(top, num_entities), dim=1)
    s_ppr = (val * deg[idx]).sum(1) / val.sum(1).clamp_min(1e-300)
    hubs = deg >= torch.quantile(deg, hub_quantile)
    hub_mass = ent[:, hubs].sum(1) / ent.sum(1).clamp_min(1e-300)
    return {"s_ppr": s_ppr, "hub_mass": hub_mass}


def plot_hub_bias(results: dict[str, dict[str, torch.Tensor]], path: str | Path) -> Path:
    """Histograms of ``s_ppr`` and ``hub_mass`` per method, side by side; saved as PNG."""
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, key, label in zip(axes, ("s_ppr", "hub_mass"),
                              ("PPR-weighted strength of top-10 entities", "PPR mass on super-hubs (top 1%)")):
        values = [results[m][key].numpy() for m in results]
        ax.hist(values, bins=20, label=[f"{m} (mean {v.mean():.3g})" for m, v in zip(results, values)], alpha=0.8)
        ax.set_xlabel(label)
        ax.set_ylabel("queries")
        ax.legend(fontsize=8)
    return save_figure(fig, path)
