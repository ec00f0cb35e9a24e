"""Pausing Python's cyclic garbage collector while bulk data is built.

Parsing an OpenIE file into entity and fact tables creates millions of small containers (dicts, lists, tuples),
none of them in a reference cycle. The collector's generation-2 passes rescan every one of them while they are
being built: at 10^5 passages (`benchmarks/bench_scale.py`, parse stage) half of the parse time went to it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_collector() -> Iterator[None]:
    """Disable the cyclic collector inside the block (reference counting still frees everything acyclic) and
    restore its previous state after; usable as a decorator."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["paused_collector"]
