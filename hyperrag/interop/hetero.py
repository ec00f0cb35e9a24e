"""The tagged ``HeteroData`` every PyG converter writes and checks (:mod:`hyperrag.interop.pyg` for the knowledge
graph and the dispatch, :mod:`hyperrag.interop.pyg_methods` for the methods' graphs): ``data.hyperrag_kind`` says
which kind of graph it holds. ``torch_geometric`` is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch_geometric.data import HeteroData

KIND_ATTR = "hyperrag_kind"


def new_hetero_data(kind: str) -> HeteroData:
    """An empty ``HeteroData`` tagged with the kind of graph it will hold."""
    from torch_geometric.data import HeteroData

    data = HeteroData()
    setattr(data, KIND_ATTR, kind)
    return data


def check_kind(data: HeteroData, kind: str) -> None:
    """Raise ValueError unless ``data`` was exported as ``kind``."""
    found = getattr(data, KIND_ATTR, None)
    if found != kind:
        raise ValueError(f"this HeteroData holds {found or 'no hyperrag graph'!r}, not {kind!r}")


__all__ = ["KIND_ATTR", "check_kind", "new_hetero_data"]
