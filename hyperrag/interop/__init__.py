"""Exchange with other graph libraries: every graph the framework builds as PyTorch Geometric ``HeteroData``
(:mod:`hyperrag.interop.pyg`), and the exports ``python -m hyperrag.index export`` writes
(:mod:`hyperrag.interop.export`)."""

from hyperrag.utils.lazy import lazy_exports

_LAZY = {
    "to_pyg": "hyperrag.interop.pyg",
    "from_pyg": "hyperrag.interop.pyg",
    "knowledge_graph_to_pyg": "hyperrag.interop.pyg",
    "knowledge_graph_from_pyg": "hyperrag.interop.pyg",
    "save_pyg": "hyperrag.interop.pyg",
    "load_pyg": "hyperrag.interop.pyg",
    "export_index": "hyperrag.interop.export",
}

__getattr__ = lazy_exports(__name__, _LAZY)
__all__ = list(_LAZY)
