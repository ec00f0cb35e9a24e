"""CDF-RAG's causal knowledge: candidate pairs, the marked-text format, the UniCausal pair classifier, the causal
graph index, depth-limited causal traversal and generation with its checks.

    UniCausal splits (hyperrag.data.unicausal) → classifier (``python train.py task=causal_pair data=unicausal``)
    candidates → marked both ways → scored → LLM-verified → CausalGraph (cached index) → CausalTraversal (paths)
    knowledge set + paths → CausalGenerator (rewrite, answer, causal graph check + fallback, claim check + rewrite)

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
