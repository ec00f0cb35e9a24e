"""The kNN dispatcher: exact up to ``graph.knn.exact_max_rows`` rows, approximate above, settings from the YAML."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from hyperrag.errors import InputError
from hyperrag.index.kg_index import graph_settings
from hyperrag.ops.knn import topk_cosine_neighbors
from hyperrag.ops.knn_graph import KnnSettings, cosine_knn_graph, knn_backend


def test_auto_picks_by_size_and_forced_backends_win():
    knn = replace(graph_settings().knn, backend="auto", exact_max_rows=1000)
    assert knn_backend(1000, knn) == "exact"
    assert knn_backend(1001, knn) == "approximate"
    assert knn_backend(10, replace(knn, backend="approximate")) == "approximate"
    assert knn_backend(10**7, replace(knn, backend="exact")) == "exact"
    assert knn_backend(10**7, None) == "exact"  # callers without settings keep the exact operator


def test_dispatch_runs_the_backend_it_names():
    pytest.importorskip("faiss")
    g = torch.Generator().manual_seed(0)
    x = torch.nn.functional.normalize(torch.randn(600, 16, generator=g), dim=1)
    knn = KnnSettings(backend="auto", exact_max_rows=600, ann_list_size=30, ann_nprobe=1, ann_refine_rounds=0)
    exact = topk_cosine_neighbors(x, 5, 0.2)
    for got, want in zip(cosine_knn_graph(x, 5, 0.2, knn), exact):
        assert torch.equal(got, want)
    # one probed cell of 20 on structureless data: the approximate search misses neighbours, so it did run
    approx = cosine_knn_graph(x, 5, 0.2, replace(knn, exact_max_rows=599))
    assert set(zip(approx[0].tolist(), approx[1].tolist())) != set(zip(exact[0].tolist(), exact[1].tolist()))


def test_the_yaml_holds_the_defaults_and_bad_values_are_one_line():
    knn = graph_settings().knn
    assert knn.backend == "auto" and knn.exact_max_rows >= 1
    assert graph_settings(knn={"backend": "approximate"}).knn.backend == "approximate"  # merged into the YAML's
    with pytest.raises(InputError) as err:
        graph_settings(knn={"backend": "annoy"})
    assert err.value.one_line() == ("graph.knn.backend: must be one of 'auto', 'exact' or 'approximate', "
                                    "got 'annoy'")
    with pytest.raises(InputError, match=r"^graph\.knn\.ann_nprobe: must be >= 1, got 0$"):
        graph_settings(knn={"ann_nprobe": 0})
