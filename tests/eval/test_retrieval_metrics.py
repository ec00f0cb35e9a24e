import pytest

from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k, retrieval_metrics


def test_recall_and_fcr_known_values():
    ranked = ["a", "b", "c", "d"]
    assert recall_at_k(ranked, ["a", "c"], 2) == 0.5
    assert recall_at_k(ranked, ["a", "c"], 3) == 1.0
    assert full_chain_at_k(ranked, ["a", "c"], 2) == 0.0
    assert full_chain_at_k(ranked, ["a", "c"], 3) == 1.0
    m = retrieval_metrics([ranked, ["x", "y"]], [["a", "c"], ["y"]], ks=(1, 2))
    assert m["recall@1"] == pytest.approx(25.0)  # (0.5 + 0) / 2
    assert m["recall@2"] == pytest.approx(75.0)  # (0.5 + 1) / 2
    assert m["fcr@2"] == pytest.approx(50.0)


def test_queries_without_gold_are_skipped():
    m = retrieval_metrics([["a"], ["b"]], [["a"], []], ks=(1,))
    assert m["queries_with_gold"] == 1 and m["recall@1"] == 100.0
