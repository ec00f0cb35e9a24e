"""benchmarks/reference_hipporag2.py's helpers that run without the reference package (issue 47): ``--set``
overrides and ``--reuse-embeddings``' read of our encoder's cache."""

from __future__ import annotations

import numpy as np

from hyperrag.embedding.cache import EmbeddingCache
from tests.conftest import load_benchmark


def _script():
    return load_benchmark("reference_hipporag2")


def test_set_overrides_read_as_settings():
    got = _script().overrides(["seed_ties=reference", "ppr_dtype=float64", "tol=1e-10", "link_top_k=5"])
    assert got == {"seed_ties": "reference", "ppr_dtype": "float64", "tol": 1e-10, "link_top_k": 5}
    from hyperrag.config import method_settings

    s = method_settings("hipporag2", **got)
    assert (s.seed_ties, s.ppr_dtype, s.tol) == ("reference", "float64", 1e-10)


def test_reuse_reads_the_encoder_cache_by_text(tmp_path):
    path = tmp_path / "emb.sqlite"
    cache = EmbeddingCache(path, dim=3)
    vectors = np.array([[1, 0, 0], [0, 0.6, 0.8]], dtype=np.float32)
    cache.put_many(["('a', 'r', 'b')", "Jardín\ntext"], vectors)
    cache.close()
    got = _script().read_cached_vectors(str(path), ["missing", "Jardín\ntext", "('a', 'r', 'b')", "Jardín\ntext"])
    assert sorted(got) == [1, 2, 3]
    np.testing.assert_array_equal(got[1], vectors[1])
    np.testing.assert_array_equal(got[2], vectors[0])
    np.testing.assert_array_equal(got[3], vectors[1])
