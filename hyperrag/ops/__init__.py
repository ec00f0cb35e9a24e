"""Shared tensor operators (PPR, kNN, ...), one implementation each for CPU and CUDA."""

from hyperrag.ops.ppr import EdgeWeightDelta, PPRGraph, PPRStats, merge_edge_deltas, personalized_pagerank

__all__ = ["EdgeWeightDelta", "PPRGraph", "PPRStats", "merge_edge_deltas", "personalized_pagerank"]
