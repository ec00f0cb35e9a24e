"""matplotlib for the figures hyperrag writes (reports, training plots, hierarchy and disk pictures): the
Agg backend, so no display is needed, and one way to save a figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (imported on first use: matplotlib is slow to import)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | Path, dpi: float | None = 120, tight: bool = True) -> Path:
    """Lay ``fig`` out (``tight``), write it to ``path`` (folders made), close it; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


__all__ = ["pyplot", "save_figure"]
