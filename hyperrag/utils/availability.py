"""Availability flags for optional packages, checked without importing them."""

from __future__ import annotations

import importlib.util
from functools import cache


@cache
def package_available(name: str) -> bool:
    """True when ``name`` can be imported (found on the path), without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def resolve_device(device: str | None = "auto") -> str:
    """``auto`` → ``cuda`` when a GPU is visible, else ``cpu``; anything else is returned as is."""
    if device in (None, "auto"):
        return "cuda" if cuda_available() else "cpu"
    return device
