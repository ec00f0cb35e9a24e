"""Shared tensor operators (PPR, kNN, ...), one implementation each for CPU and CUDA."""

from hyperrag.ops.ppr import EdgeWeightDelta, PPRGraph, PPRStats, personalized_pagerank

__all__ = ["EdgeWeightDelta", "PPRGraph", "PPRStats", "personalized_pagerank"]
