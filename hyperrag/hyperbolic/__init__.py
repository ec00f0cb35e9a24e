"""Hyperbolic (Poincaré-ball) embeddings of graphs: geoopt manifold, Riemannian Adam, Lightning.

    from hyperrag.config import task_arguments
    from hyperrag.hyperbolic import PoincareEmbedding, EdgeDataModule, tree_closure, reconstruction_metrics

    edges = tree_closure(4, 6)                      # [2, 30948] descendant → ancestor
    model = PoincareEmbedding(5461, **task_arguments("poincare_tree", lr=0.04))   # task/poincare_tree.yaml
    data = EdgeDataModule(edges, 5461, batch_size=8192, num_negatives=10, negative_group_size=32)
    lightning.Trainer(max_epochs=50).fit(model, data)  # or model.fit_fast(data, 50)
    reconstruction_metrics(model.points, edges)     # {"mean_rank": ..., "map": ...}

Modules: ``distance`` (closed-form distances), ``projection`` (Euclidean → ball), ``sampling`` (negatives),
``datamodule``, ``losses``, ``poincare_model``, ``evaluation`` (mean rank / MAP), ``retrieval`` (top-k),
``plot`` (Poincaré disk), ``graphs`` (tree closure, passage graph),
``ball_index`` (HyperRAG's ball: passage table, graph and model in step), ``streaming`` (HyperRAG's online updates
with frozen nodes), ``distance_stats`` (HyperRAG's Table 3). HyperRAG's passage graphs: ``hyperrag.passage_graph``;
the ``train.py`` tasks that embed them: ``hyperrag.training.tasks.poincare``.
Names are imported lazily: ``import hyperrag.hyperbolic`` does not import Lightning or matplotlib.
"""

from __future__ import annotations

from hyperrag.utils.lazy import lazy_exports

_EXPORTS = {
    "PoincareEmbedding": "poincare_model",
    "EdgeDataModule": "datamodule",
    "EdgeBatches": "datamodule",
    "NegativeSampler": "sampling",
    "EuclideanToBall": "projection",
    "poincare_distance": "distance",
    "pairwise_poincare_distance": "distance",
    "grouped_distance": "distance",
    "paired_distance": "distance",
    "distance_to_origin": "distance",
    "nickel_kiela_loss": "losses",
    "nickel_kiela_grouped": "losses",
    "edge_distance_loss": "losses",
    "anchor_loss": "losses",
    "reconstruction_metrics": "evaluation",
    "topk_poincare": "retrieval",
    "plot_poincare_disk": "plot",
    "tree_closure": "graphs",
    "tree_size": "graphs",
    "shared_entity_edges": "graphs",
    "StreamingBall": "streaming",
    "BallIndex": "ball_index",
    "PassageTable": "ball_index",
}

__all__ = [
    "BallIndex",
    "EdgeBatches",
    "EdgeDataModule",
    "EuclideanToBall",
    "NegativeSampler",
    "PassageTable",
    "PoincareEmbedding",
    "StreamingBall",
    "anchor_loss",
    "distance_to_origin",
    "edge_distance_loss",
    "grouped_distance",
    "nickel_kiela_grouped",
    "nickel_kiela_loss",
    "paired_distance",
    "pairwise_poincare_distance",
    "plot_poincare_disk",
    "poincare_distance",
    "reconstruction_metrics",
    "shared_entity_edges",
    "topk_poincare",
    "tree_closure",
    "tree_size",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return __all__
