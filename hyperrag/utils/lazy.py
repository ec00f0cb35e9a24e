"""Lazy re-exports for package ``__init__`` files: a name is imported from its module on first access, so
``import hyperrag.<package>`` stays cheap (no torch, Lightning or matplotlib until a name that needs them is used)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package`` serving ``exports``.

    Args:
        package: the package's ``__name__``.
        exports: public name → the module that defines it: a full dotted path, or a submodule of ``package``
            (``"poincare_model"``).

    Returns:
        The ``__getattr__`` to assign in the package; it caches each name in the package once imported.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module if "." in module else f"{package}.{module}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__


__all__ = ["lazy_exports"]
