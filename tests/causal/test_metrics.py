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


def test_gold_reference_is_the_gold_passages_and_the_pairs_extracted_from_them(tmp_path, encoder):
    """CRC's default reference does not come from the run: the gold supporting passages and the causal pairs the
    graph extracted from exactly those passages (none for a question without gold)."""
    from hyperrag.causal.graph import build_causal_graph
    from hyperrag.causal.reference import gold_causal_items
    from hyperrag.config import method_settings
    from hyperrag.eval.causal import pair_key
    from tests.causal.corpus import causal_dataset

    dataset = causal_dataset(tmp_path)
    graph = build_causal_graph(dataset, encoder, method_settings("cdfrag").causal)
    refs = gold_causal_items(graph, [["c00"], [], ["c00", "c01"]])
    from_c00 = {pair_key(*graph.triple(e)) for e, info in enumerate(graph.edge_info) if info["passage_id"] == "c00"}
    assert from_c00 and refs[0] == ({"c00"}, from_c00) and refs[1] is None
    assert refs[2][0] == {"c00", "c01"} and from_c00 < refs[2][1]
    assert gold_causal_items(None, [["c00"]]) == [({"c00"}, set())]  # no causal graph (Table 3's stage 1)


def test_crc_is_defined_for_a_run_without_a_causal_graph():
    """Table 3's baseline stage builds no causal index: CRC against the gold reference still scores its passages."""
    from omegaconf import OmegaConf

    from hyperrag.eval.rescore import causal_reference
    from hyperrag.eval.suite import EvalInputs, evaluate_rows

    rows = [{"question": "q1", "ranked_ids": ["a", "b", "c"], "gold_ids": ["a", "c"]},
            {"question": "q2", "ranked_ids": ["d"], "gold_ids": []}]
    cfg = OmegaConf.create({"crc_reference": "gold", "causal_index": None})
    ref = causal_reference(cfg, {}, None, rows, None, None)
    assert ref == [({"a", "c"}, set()), None]
    agg, per, _ = evaluate_rows(EvalInputs(rows=rows, context_top_n=3, causal_reference=ref), ["crc"])
    assert per[0]["crc"] == pytest.approx(2 / 3) and per[1]["crc"] is None and agg["crc"] == pytest.approx(200 / 3)
    graph_mode = OmegaConf.create({"crc_reference": "graph", "causal_index": None})
    assert causal_reference(graph_mode, {}, None, rows, None, None) is None  # no graph: undefined
    from hyperrag.errors import InputError

    with pytest.raises(InputError, match="crc_reference: must be gold or graph"):
        causal_reference(OmegaConf.create({"crc_reference": "run"}), {}, None, rows, None, None)


def test_answer_precision_and_recall_beside_f1():
    from hyperrag.eval.qa import token_f1, token_precision_recall
    from hyperrag.eval.suite import EvalInputs, evaluate_rows

    p, r = token_precision_recall("the Vistula river in Warsaw", ["Vistula river"])
    assert (p, r) == (pytest.approx(2 / 4), 1.0)  # "the" is dropped by normalisation
    assert token_f1("the Vistula river in Warsaw", ["Vistula river"]) == pytest.approx(2 * p * r / (p + r))
    assert token_precision_recall("Oder", ["Vistula"]) == (0.0, 0.0)
    rows = [{"question": "q", "answer": "It is the Vistula river, in Warsaw.", "short_answer": "Vistula",
             "answers": ["Vistula river"]}]
    agg, _, _ = evaluate_rows(EvalInputs(rows=rows), ["answer_overlap"])
    assert agg == {"precision": 100.0, "recall": 50.0}
