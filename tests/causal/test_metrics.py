"""CDF-RAG's metrics (§3.3, Tables 2-3), per query, on hand-made inputs with known values."""

import pytest
import torch

from hyperrag.eval.causal import (
    causal_chain_depth,
    causal_retrieval_coverage,
    context_relevance,
    hallucination_score,
    semantic_refinement_score,
    span_alignment,
    span_groundedness,
)


def test_context_relevance_and_srs():
    q = torch.tensor([1.0, 0.0])
    items = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    assert context_relevance(q, items) == 0.5 and context_relevance(q, torch.empty(0, 2)) is None
    assert semantic_refinement_score(q, torch.tensor([[0.6, 0.8]])) == pytest.approx(0.6)
    assert semantic_refinement_score(q, torch.empty(0)) is None  # nothing refined: undefined, not 1


def test_crc_counts_passages_and_triples_on_reference_paths():
    ref_passages, ref_pairs = {"p1", "p3"}, {("heavy logging", "soil erosion")}
    assert causal_retrieval_coverage(["p1", "p2"], [["Heavy logging", "soil erosion!"]], ref_passages, ref_pairs) \
        == pytest.approx(2 / 3)
    assert causal_retrieval_coverage(["p2"], [], ref_passages, ref_pairs) == 0.0
    assert causal_retrieval_coverage([], [], ref_passages, ref_pairs) is None


def test_ccd_and_hallucination_score():
    assert causal_chain_depth([1, 2, 2, 3]) == 2.0 and causal_chain_depth([]) is None
    assert hallucination_score(["supported", "refuted", "not_enough_info", "supported"]) == 0.5
    assert hallucination_score([]) == 0.0


def test_span_alignment_traces_answers_to_spans():
    passage = "In 1990 heavy logging in the valley led to severe soil erosion across the region."
    assert span_alignment("severe soil erosion", passage) == 1.0
    assert span_alignment("Heavy logging led to erosion", "erosion") < 0.5  # a short item covers its share only
    assert span_groundedness("Heavy logging in the valley led to severe soil erosion. Mars is red.", [passage]) == 0.5
    assert span_groundedness("", [passage]) is None


def test_reference_items_are_the_question_s_causal_paths(tmp_path, encoder):
    from hyperrag.causal.graph import build_causal_graph
    from hyperrag.causal.reference import reference_causal_items
    from hyperrag.config import method_settings
    from tests.causal.corpus import causal_dataset

    dataset = causal_dataset(tmp_path)
    settings = method_settings("cdfrag")
    graph = build_causal_graph(dataset, encoder, settings.causal)
    refs = reference_causal_items(graph, settings.traversal, encoder,
                                  [dataset.queries[0].question, "Which tree has hard durable wood?"])
    # the drinking-water question reaches the logging → erosion → silting chain of c00 / c01
    assert {"c00", "c01"} <= refs[0][0] and ("heavy logging in varden valley", "severe soil erosion on hillsides") \
        in refs[0][1]
    assert not refs[1][0] & {"c00", "c01"}
