"""Expansion operators: best-first traversal over typed edges."""

from hyperrag.expansion.best_first import (
                                           EdgeKind,
                                           Expansion,
                                           TypedGraph,
                                           best_first_expand,
                                           kind_weight_vector,
)

__all__ = ["EdgeKind", "Expansion", "TypedGraph", "best_first_expand", "kind_weight_vector"]
