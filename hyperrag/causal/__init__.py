"""CDF-RAG's causal knowledge: candidate pairs, silver labels, the pair classifier, the causal graph index,
depth-limited causal traversal and the feedback generation loop.

    candidates  → labels (silver) → classifier (``python train.py task=causal_pair``)
    candidates  → scored / LLM-verified → CausalGraph (cached index) → CausalTraversal (query-time paths)
    retrieved passages + paths → CausalGenerator (rewrite, answer, consistency fallback, claim-check rewrite)

Heavy pieces (transformers, Lightning) are imported by the modules that need them.
"""

from hyperrag.causal.candidates import CandidatePair, extract_candidates
from hyperrag.causal.graph import (
           CausalGraph,
           CausalGraphSettings,
           build_causal_graph,
           load_or_build_causal_index,
)
from hyperrag.causal.traversal import CausalPath, CausalTraversal

__all__ = ["CandidatePair", "CausalGraph", "CausalGraphSettings", "CausalPath", "CausalTraversal",
           "build_causal_graph", "extract_candidates", "load_or_build_causal_index"]
