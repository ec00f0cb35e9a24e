"""Stage 2 of entity deduplication: embedding similarity between the entities stage 1 left apart.

Each remaining group (a stage-1 cluster or a single entity) is represented by the normalised mean of its
members' embeddings; groups whose representatives are among each other's top-``k`` neighbours with cosine at least
``threshold`` merge, under the same digit and type guards as the fuzzy stage.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from hyperrag.dedup.fuzzy import compatible
from hyperrag.ops.knn_graph import KnnSettings, cosine_knn_graph


def semantic_pairs(embeddings: torch.Tensor, names: Sequence[str], threshold: float = 0.95, k: int = 10,
                   min_chars: int = 4, types: Sequence[str] | None = None,
                   representative: Sequence[int] | None = None, token_guard: bool = False,
                   knn: KnnSettings | None = None) -> list[tuple[int, int, float]]:
    """Pairs ``(a, b, cosine)`` (``a < b`` in the rows of ``embeddings``) to merge.

    Args:
        embeddings: FloatTensor [G, D], one row per group (or entity).
        names: the entity names; ``representative[g]`` picks the name/type guarding row ``g``.
        threshold: cosine cut-off.
        k: neighbours examined per row.
        min_chars: rows whose name is shorter never merge.
        types: optional entity types.
        representative: row → entity id (identity when None).
        token_guard: multi-word names must have the same content words (:func:`~hyperrag.dedup.fuzzy.compatible`).
        knn: how the neighbours are searched (``graph.knn``: exact or approximate by size); ``None``: exact.
    """
    n = embeddings.shape[0]
    if n < 2:
        return []
    rep = list(range(n)) if representative is None else list(representative)
    src, dst, sim = cosine_knn_graph(embeddings.float(), min(k, n - 1), threshold, knn)
    pairs: dict[tuple[int, int], float] = {}
    for a, b, s in zip(src.tolist(), dst.tolist(), sim.tolist()):
        if a == b:
            continue
        ea, eb = rep[a], rep[b]
        if len(names[ea]) < min_chars or len(names[eb]) < min_chars:
            continue
        if not compatible(ea, eb, names, types, token_guard):
            continue
        key = (min(a, b), max(a, b))
        pairs[key] = max(pairs.get(key, 0.0), float(s))
    return [(a, b, s) for (a, b), s in sorted(pairs.items())]
