"""hyperrag: graph-based retrieval-augmented generation on shared PyTorch operators.

Heavy or optional dependencies (sentence-transformers, igraph, vLLM, cuGraph, llama-cpp) are
imported inside the functions that need them, so ``import hyperrag`` stays cheap.
"""

__version__ = "0.1.0"
