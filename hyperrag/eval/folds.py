"""Cross-validation folds of a question set: a seeded shuffle dealt round robin.

Every cross-validated benchmark (``benchmarks/cv_*.py``, ``cv_select.py``, ``hyperrag_readings.py``) splits its
questions here, so one seed gives one split whichever script reads it. (``retrieve.py cv_folds=K`` and
``bench_ppo.py`` deal their folds with :func:`hyperrag.runners.cross_fit.folds`, a torch permutation: other folds.)
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import TypeVar

#: what is split: question ids or positions (sorted before the shuffle, so the input order does not matter)
Key = TypeVar("Key", str, int)


def split_folds(queries: Iterable[Key], folds: int, seed: int) -> list[list[Key]]:
    """``folds`` disjoint folds covering ``queries``, sizes differing by at most 1.

    Args:
        queries: question ids or positions ``[n]``, each once.
        folds: how many folds (2 to ``n``).
        seed: the shuffle's seed (:class:`random.Random`).

    Returns:
        ``folds`` lists: the sorted keys shuffled with ``seed``, the ``i``-th key to fold ``i mod folds``, each fold
        in shuffled order.

    Raises:
        ValueError: ``folds`` outside 2..n.
    """
    order = sorted(queries)
    if folds < 2 or folds > len(order):
        raise ValueError(f"folds must be between 2 and the number of questions ({len(order)}), not {folds}")
    random.Random(seed).shuffle(order)
    return [order[i::folds] for i in range(folds)]


__all__ = ["split_folds"]
