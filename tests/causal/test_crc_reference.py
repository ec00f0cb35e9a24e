"""CRC like for like (issue 39 item 5): the same item budget for every method, passage and pair CRC separately,
and one fixed reference graph per dataset — built once from the gold passages, read by every method's CRC."""

from __future__ import annotations

import json

import pytest
from omegaconf import OmegaConf

from hyperrag.eval.causal import crc_by_kind, pair_key, reference_graph_dir
from hyperrag.eval.rescore import causal_reference, crc_reference_graph, crc_reference_label
from hyperrag.eval.suite import EvalInputs, evaluate_rows

GOLD = {"g1", "g2"}
DENSE = {"question": "q", "gold_ids": ["g1", "g2"], "ranked_ids": ["g1", "x1", "x2", "x3", "x4", "g2", "x5"]}
CDFRAG = {"question": "q", "gold_ids": ["g1", "g2"], "ranked_ids": ["x1", "g1", "x2", "x3", "x4", "g2", "x6"],
          "details": {"causal_pairs": [["rain", "flood", "g1", ""], ["wind", "fire", "x1", ""],
                                       ["flood", "famine", "g2", ""]]}}


def test_every_method_is_scored_on_the_same_item_budget():
    """Budget 5: both methods' first five passages count (CDF-RAG's C_graph passages at ranks 6+ do not, a dense
    run's ranks 6+ do not either), and at most five triples."""
    ref = (GOLD, {pair_key("rain", "flood"), pair_key("flood", "famine")})
    dense = crc_by_kind(DENSE["ranked_ids"], [], *ref, budget=5)
    cdf = crc_by_kind(CDFRAG["ranked_ids"], CDFRAG["details"]["causal_pairs"], *ref, budget=5)
    assert dense["crc_passages"] == cdf["crc_passages"] == pytest.approx(1 / 5)  # g2 sits at rank 6 in both
    assert crc_by_kind(DENSE["ranked_ids"], [], *ref, budget=6)["crc_passages"] == pytest.approx(2 / 6)
    assert crc_by_kind(CDFRAG["ranked_ids"], CDFRAG["details"]["causal_pairs"], *ref, budget=2)["crc_pairs"] == 0.5
    with_budget = evaluate_rows(EvalInputs(rows=[DENSE, CDFRAG], context_top_n=2, causal_reference=[ref, ref],
                                           crc_budget=5), ["crc"])[1]
    assert [p["gold_passage_precision"] for p in with_budget] == [pytest.approx(0.2)] * 2  # not context_top_n


def test_passage_and_pair_crc_are_reported_separately():
    """A method without triples has no pair CRC (None, left out of the mean), not 0; the pooled figure mixes the
    kinds, so the two methods' pooled CRCs differ although their passages score the same."""
    ref = (GOLD, {pair_key("rain", "flood"), pair_key("flood", "famine")})
    agg, per, _ = evaluate_rows(EvalInputs(rows=[DENSE, CDFRAG], causal_reference=[ref, ref], crc_budget=5), ["crc"])
    assert per[0]["crc_pairs"] is None and per[1]["crc_pairs"] == pytest.approx(2 / 3)
    assert per[0]["gold_passage_precision"] == per[1]["gold_passage_precision"] == pytest.approx(0.2)
    assert per[0]["crc"] == pytest.approx(1 / 5) and per[1]["crc"] == pytest.approx(3 / 8)
    assert agg["crc_pairs"] == pytest.approx(200 / 3) and agg["gold_passage_precision"] == pytest.approx(20.0)


def test_the_passage_share_is_named_for_what_it_measures():
    """Against the gold reference the passage share is gold-passage precision (nothing causal in it); against a
    causal graph's paths from the question it is the causal form, ``crc_passages_causal``."""
    ref = (GOLD, {pair_key("rain", "flood")})
    for mode, key in (("gold", "gold_passage_precision"), ("graph", "crc_passages_causal")):
        agg, per, _ = evaluate_rows(EvalInputs(rows=[DENSE], causal_reference=[ref], crc_budget=5,
                                               crc_reference=mode), ["crc"])
        assert per[0][key] == pytest.approx(0.2) and "crc_passages" not in per[0] and key in agg


def test_one_reference_graph_from_the_gold_passages_is_shared_by_every_method(tmp_path, encoder):
    """``build_reference_graph`` extracts from the gold passages only and labels its classifier and verifier;
    evaluation reads that one file for every method (a CDF-RAG run's own graph only with ``causal_index=run``)."""
    from hyperrag.causal.graph import CausalGraph, build_causal_graph
    from hyperrag.causal.reference import build_reference_graph, causal_reference_from_index
    from hyperrag.config import method_settings
    from tests.causal.corpus import causal_dataset

    dataset = causal_dataset(tmp_path)
    settings = method_settings("cdfrag").causal
    directory = reference_graph_dir(tmp_path / "cache", dataset.name)
    label = build_reference_graph(dataset, encoder, settings, directory)  # no classifier, no LLM: labelled
    gold = {g for q in dataset.queries for g in q.gold_ids}
    graph = CausalGraph.load(directory)
    assert set(graph.passage_ids) == gold and {i["passage_id"] for i in graph.edge_info} <= gold
    assert label["gold_passages"] == len(gold) and label["edges"] == graph.num_edges > 0
    assert label["classifier"] is None and "rule priors" in label["classifier_label"]
    assert label["verifier"] is None and label["verifier_label"] == "falls back: pairs unverified (no LLM)"
    # two runs of different methods, one with its own (full-corpus) causal graph: both get the reference's items
    own = tmp_path / "own"
    own.mkdir()
    build_causal_graph(dataset, encoder, settings).save(own)
    rows = [{"question": q.question, "gold_ids": list(q.gold_ids)} for q in dataset.queries]
    cfg = OmegaConf.create({"crc_reference": "gold", "causal_index": "reference", "cache_dir": str(tmp_path / "cache")})
    runs = [({"dataset": dataset.name, "method": "dense"}, None),
            ({"dataset": dataset.name, "method": "cdfrag", "causal_index_dir": str(own)}, None)]
    refs = [causal_reference(cfg, saved, run_cfg, rows, encoder, causal_reference_from_index) for saved, run_cfg in runs]
    assert refs[0] == refs[1] and any(r[1] for r in refs[0])
    assert all(crc_reference_graph(cfg, saved, None) == directory for saved, _ in runs)
    recorded = crc_reference_label(cfg, runs[0][0], None)
    assert recorded["directory"] == str(directory) and recorded["verifier_label"] == label["verifier_label"]
    assert json.loads((directory / "crc_reference.json").read_text())["gold_ids"] == sorted(
        gold, key=dataset.corpus.ids.index)
    run_own = OmegaConf.create({**OmegaConf.to_container(cfg), "causal_index": "run"})
    assert crc_reference_graph(run_own, runs[1][0], None) == own  # the run's own graph: only when asked


def test_reference_command_bad_override_is_one_line_and_exit_2(capsys):
    from hyperrag.causal.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(["reference", "data=no_such_dataset"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("error: ")
