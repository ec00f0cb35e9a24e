"""hyperrag: graph-based retrieval-augmented generation on shared PyTorch operators.

Heavy or optional dependencies (sentence-transformers, igraph, vLLM, cuGraph, llama-cpp) are
imported inside the functions that need them, so ``import hyperrag`` stays cheap.
"""

from hyperrag.utils.lazy import lazy_exports

__version__ = "0.1.0"

# the Python API (hyperrag.api): imported on first use, so `import hyperrag` stays cheap
__getattr__ = lazy_exports(__name__, {"RAG": "hyperrag.api", "Answer": "hyperrag.api", "Hit": "hyperrag.api"})
