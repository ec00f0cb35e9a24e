"""RAPTOR's soft clustering of text embeddings: UMAP reduction, Gaussian mixtures with the number of components
chosen by BIC, soft assignment by a probability threshold, in two stages (global, then local).

1. *Global*: UMAP (cosine, ``√(n−1)`` neighbours — a wide view) to ``reduction_dim`` dimensions, then a Gaussian
   mixture whose number of components minimises the BIC over ``1 .. max_clusters−1``; every point joins each
   component whose posterior probability exceeds ``threshold`` — so a point can sit in several clusters.
2. *Local*: inside each global cluster larger than ``reduction_dim + 1`` points, UMAP again with
   ``local_neighbors`` neighbours (a close-up view) and the same BIC-chosen, soft mixture.
3. A cluster whose texts together exceed ``max_cluster_tokens`` is clustered again on its own (RAPTOR keeps a
   summary's input within the summariser's context).

umap-learn and scikit-learn do the work (imported lazily); this module only wires them the way RAPTOR does.
Two guards RAPTOR lacks: a point no component claims above the threshold joins its most probable component (so
no node drops out of the tree), and a cluster that re-clustering returns whole is kept as it is (RAPTOR would
recurse forever on it).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from hyperrag.config.validation import PositiveInt, Probability, settings


@settings
class ClusteringSettings:
    """RAPTOR's clustering (part of the tree's cache key).

    Attributes:
        reduction_dim: UMAP output dimension (RAPTOR: 10).
        threshold: posterior probability above which a point joins a component (RAPTOR: 0.1).
        max_clusters: the BIC scan tries ``1 .. max_clusters − 1`` components (RAPTOR: 50).
        local_neighbors: UMAP neighbours of the local stage (RAPTOR: 10).
        max_cluster_tokens: a cluster with more tokens of text is clustered again (RAPTOR: 3500).
        seed: UMAP and mixture seed (a seeded UMAP runs single-threaded and is reproducible).
    """

    reduction_dim: PositiveInt
    threshold: Probability
    max_clusters: PositiveInt
    local_neighbors: PositiveInt
    max_cluster_tokens: PositiveInt
    seed: int


def reduce_dimensions(x: np.ndarray, dim: int, neighbors: int, seed: int) -> np.ndarray:
    """UMAP (cosine) of ``x`` [n, D] to [n, dim]; ``dim`` and ``neighbors`` are clipped to what ``n`` allows."""
    import umap

    n = x.shape[0]
    dim = max(1, min(dim, n - 2))
    neighbors = max(2, min(neighbors, n - 1))
    with warnings.catch_warnings():  # a seeded UMAP says it runs single-threaded; small inputs skip spectral init
        warnings.simplefilter("ignore", UserWarning)
        reducer = umap.UMAP(n_neighbors=neighbors, n_components=dim, metric="cosine", random_state=seed,
                            init="spectral" if n > dim + 2 else "random")
        return np.asarray(reducer.fit_transform(x), dtype=np.float64)


def bic_components(x: np.ndarray, max_clusters: int, seed: int) -> int:
    """The number of Gaussian mixture components in ``1 .. max_clusters − 1`` (and at most n) with the lowest BIC."""
    from sklearn.mixture import GaussianMixture

    upper = max(1, min(max_clusters - 1, x.shape[0]))
    bics = [GaussianMixture(n_components=k, random_state=seed).fit(x).bic(x) for k in range(1, upper + 1)]
    return int(np.argmin(bics)) + 1


def soft_mixture(x: np.ndarray, threshold: float, max_clusters: int, seed: int) -> tuple[list[np.ndarray], int]:
    """Soft Gaussian-mixture clustering of ``x`` [n, d] with a BIC-chosen number of components.

    Returns:
        per point, the components (ints) whose posterior exceeds ``threshold`` (its most probable one when none
        does), and the number of components.
    """
    from sklearn.mixture import GaussianMixture

    if x.shape[0] == 1:
        return [np.array([0])], 1
    k = bic_components(x, max_clusters, seed)
    probs = GaussianMixture(n_components=k, random_state=seed).fit(x).predict_proba(x)
    labels = [np.flatnonzero(p > threshold) if (p > threshold).any() else np.array([int(p.argmax())])
              for p in probs]
    return labels, k


def two_stage_clusters(x: np.ndarray, settings: ClusteringSettings) -> list[list[int]]:
    """Global then local soft clustering of the rows of ``x`` [n, D]; returns clusters as lists of row indices
    (a row may be in several)."""
    s = settings
    n = x.shape[0]
    if n <= 2:
        return [list(range(n))]
    reduced = reduce_dimensions(x, s.reduction_dim, int(math.sqrt(n - 1)), s.seed)
    global_labels, n_global = soft_mixture(reduced, s.threshold, s.max_clusters, s.seed)
    clusters: list[list[int]] = []
    for g in range(n_global):
        members = [i for i, labels in enumerate(global_labels) if g in labels]
        if not members:
            continue
        if len(members) <= s.reduction_dim + 1:
            clusters.append(members)
            continue
        local = reduce_dimensions(x[members], s.reduction_dim, s.local_neighbors, s.seed)
        local_labels, n_local = soft_mixture(local, s.threshold, s.max_clusters, s.seed)
        for c in range(n_local):
            chosen = [members[i] for i, labels in enumerate(local_labels) if c in labels]
            if chosen:
                clusters.append(chosen)
    return clusters


def raptor_clusters(x: np.ndarray, tokens: Sequence[int], settings: ClusteringSettings) -> list[list[int]]:
    """RAPTOR's clusters of the rows of ``x`` [n, D] (their texts have ``tokens`` tokens): two-stage soft
    clustering, then any cluster over ``max_cluster_tokens`` clustered again on its own."""
    out: list[list[int]] = []
    for cluster in two_stage_clusters(x, settings):
        size = sum(int(tokens[i]) for i in cluster)
        if len(cluster) == 1 or size <= settings.max_cluster_tokens:
            out.append(cluster)
            continue
        sub = raptor_clusters(x[cluster], [tokens[i] for i in cluster], settings) if len(cluster) < x.shape[0] \
            else [list(range(len(cluster)))]
        if len(sub) == 1 and len(sub[0]) == len(cluster):  # re-clustering changed nothing: keep it whole
            out.append(cluster)
        else:
            out.extend([cluster[i] for i in c] for c in sub)
    return out
