"""RAPTOR's recursive summary tree over passages: soft UMAP + Gaussian-mixture clustering, cluster summaries."""

from hyperrag.tree.clustering import ClusteringSettings, raptor_clusters, soft_mixture, two_stage_clusters
from hyperrag.tree.summary_tree import SummaryTree, TreeBuilder, TreeSettings, load_or_build_tree

__all__ = ["ClusteringSettings", "SummaryTree", "TreeBuilder", "TreeSettings", "load_or_build_tree",
           "raptor_clusters", "soft_mixture", "two_stage_clusters"]
