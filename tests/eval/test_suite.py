"""The evaluation suite over hand-made prediction rows: every metric's value is known in advance."""

import pytest

from hyperrag.data.types import Corpus, Passage
from hyperrag.eval.suite import METRICS, EvalInputs, evaluate_rows, select_metrics
from tests.eval.conftest import TableEncoder

CORPUS = Corpus([Passage("p1", "Marie Curie", "Marie Curie was born in Warsaw. She moved to Paris."),
                 Passage("p2", "Warsaw", "Warsaw lies on the Vistula. The Vistula flows into the Baltic Sea."),
                 Passage("p3", "Paris", "Paris lies on the Seine."),
                 Passage("p4", "Seine", "The Seine flows into the English Channel at Le Havre.")])

ROWS = [
    {"id": "q1", "question": "Into which sea does the river of Curie's birthplace flow?", "ranked_ids": ["p1", "p3", "p2"],
     "gold_ids": ["p1", "p2"], "answers": ["Baltic Sea"], "answer": "Baltic Sea",
     "gold_sentences": [{"id": "p1#s0", "passage_id": "p1", "text": "Marie Curie was born in Warsaw."},
                        {"id": "p2#s1", "passage_id": "p2", "text": "The Vistula flows into the Baltic Sea."}],
     "causal_pairs": [["p1", "p2"], ["Marie Curie", "Paris"]]},
    {"id": "q2", "question": "Where does the Seine reach the sea?", "ranked_ids": ["p3", "p4", "p1"],
     "gold_ids": ["p3", "p4"], "answers": ["Le Havre"], "answer": "Rouen"},
]
ENC = TableEncoder({ROWS[0]["question"]: [1, 0, 0], "Baltic Sea": [1, 0, 0], ROWS[1]["question"]: [0, 1, 0],
                    "Rouen": [1, 0, 0], CORPUS[0].content: [1, 0, 0]})


def test_auto_suite_known_values():
    e = EvalInputs(rows=[dict(r) for r in ROWS], corpus=CORPUS, encoder=ENC, ks=(1, 2), context_top_n=2)
    agg, per, skipped = evaluate_rows(e, "auto")
    assert skipped == {}
    assert agg["recall@1"] == pytest.approx(50.0)      # q1: 1/2, q2: 1/2
    assert agg["recall@2"] == pytest.approx(75.0)      # q1: 1/2 (p2 is third), q2: 2/2
    assert agg["fcr@2"] == pytest.approx(50.0)
    # q1 by gold sentences: p1's sentence (p1 in top 2) yes, p2's no → 0.5; q2 by passages: 1.0
    assert agg["context_recall"] == pytest.approx(75.0)
    assert agg["em"] == 50.0 and agg["f1"] == 50.0
    assert agg["jsr"] == 0.0                           # q1 right but its chain is not in the top 2
    assert agg["answer_relevancy_emb"] == pytest.approx(50.0)  # cosines 1 and 0
    # "Baltic Sea" is not in q1's top-2 context (p1, p3); "Rouen" is nowhere → both ungrounded
    assert agg["groundedness_lexical"] == 0.0 and agg["hallucination_rate_lexical"] == 100.0
    # q1 pairs: (p1, p2) misses p2; ("Marie Curie", "Paris") both in p1's text → 1/2; q2 has no pairs
    assert agg["causal_coverage"] == pytest.approx(50.0)
    assert per[0]["id"] == "q1" and per[0]["context_recall"] == 0.5 and per[1]["causal_coverage"] is None
    # context relevance: q1's items p1 (cosine 1), p3 (0) → 0.5; q2's p3, p4 → 0
    assert agg["context_relevance"] == pytest.approx(25.0)
    # span groundedness: neither answer aligns with a span of its top-2 passages
    assert agg["groundedness_span"] == 0.0
    # a wider context grounds q1's answer
    agg3, _, _ = evaluate_rows(EvalInputs(rows=[dict(r) for r in ROWS], corpus=CORPUS, ks=(3,), context_top_n=3),
                               ["groundedness_lexical", "context_recall", "groundedness_span"])
    assert agg3["groundedness_lexical"] == 50.0 and agg3["hallucination_rate_lexical"] == 50.0
    assert agg3["groundedness_span"] == 50.0  # "Baltic Sea" is a span of p2
    assert agg3["context_recall"] == 100.0


def test_needs_decide_auto_and_explicit_requests_are_skipped_with_a_reason():
    bare = [{"id": "x", "question": "?", "ranked_ids": ["p1"], "gold_ids": ["p1"], "answers": []}]
    e = EvalInputs(rows=bare)
    assert select_metrics("auto", e) == ["retrieval", "context_recall"]
    agg, _, skipped = evaluate_rows(e, "retrieval,groundedness,qa")
    assert skipped == {"groundedness": "needs answers, corpus, llm", "qa": "needs answers"}
    assert agg["recall@5"] == 100.0
    with pytest.raises(ValueError, match="unknown metric"):
        select_metrics(["recall"], e)
    assert set(METRICS) >= {"answer_relevancy", "groundedness", "causal_coverage"}


CDF_ROWS = [
    {"id": "c1", "question": "q", "ranked_ids": ["p1", "p2", "p3"], "gold_ids": ["p1"], "answers": ["a"],
     "answer": "The Vistula flows into the Baltic Sea. It is blue.",
     "details": {"refinement_similarity": 0.8, "causal_path_depths": [1, 2, 3],
                 "causal_pairs": [["logging", "erosion", "p2", ""], ["rain", "floods", "p3", "Rain brings floods."]]}},
    {"id": "c2", "question": "r", "ranked_ids": ["p4", "p3"], "gold_ids": ["p4"], "answers": ["b"], "answer": "unknown",
     "details": {"refinement_similarity": None, "causal_path_depths": [], "causal_pairs": []}},
]


def test_cdfrag_metrics_from_details_and_reference_paths():
    """CRC against reference causal paths, CCD as mean hops, SRS only where a refinement happened, span
    groundedness over passages and retrieved triples, abstentions not judged."""
    reference = [({"p2"}, {("logging", "erosion")}), ({"p9"}, set())]
    e = EvalInputs(rows=[dict(r) for r in CDF_ROWS], corpus=CORPUS, context_top_n=2, causal_reference=reference,
                   crc_budget=2)
    assert {"crc", "ccd", "srs", "groundedness_span"} <= set(select_metrics("auto", e))
    agg, per, _ = evaluate_rows(e, ["crc", "ccd", "srs", "groundedness_span"])
    # budget 2 per kind — c1: passages p1, p2 + 2 triples; on a reference path: p2 and (logging, erosion) → 2/4
    # pooled, 1/2 passages, 1/2 triples; c2: p4, p3 → 0/2, no triple
    assert per[0]["crc"] == 0.5 and per[1]["crc"] == 0.0 and agg["crc"] == pytest.approx(25.0)
    assert (per[0]["gold_passage_precision"], per[0]["crc_pairs"]) == (0.5, 0.5)
    assert (per[1]["gold_passage_precision"], per[1]["crc_pairs"]) == (0.0, None)
    assert agg["gold_passage_precision"] == pytest.approx(25.0) and agg["crc_pairs"] == pytest.approx(50.0)
    assert agg["ccd"] == pytest.approx(2.0) and per[1]["ccd"] is None  # hops, not percent
    assert agg["srs"] == pytest.approx(80.0) and per[1]["srs"] is None
    # c1's first sentence is a span of p2 (top 2), "It is blue." aligns nowhere → 0.5; c2 abstains
    assert per[0]["groundedness_span"] == 0.5 and per[1]["groundedness_span"] is None


def test_hallucination_rate_is_the_share_of_flagged_responses():
    """HR counts responses flagged by the verifier, not the mean unsupported share: one answer half
    supported and one fully supported give HR 50 (not 25); with hr_delta = 0.5 the first is no longer flagged."""
    rows = [{"id": "h1", "question": "q", "ranked_ids": ["p2"], "answers": ["x"],
             "answer": "The Vistula flows into the Baltic Sea. Paris lies on the Rhine."},
            {"id": "h2", "question": "q", "ranked_ids": ["p3"], "answers": ["x"], "answer": "Paris lies on the Seine."}]
    strict, _, _ = evaluate_rows(EvalInputs(rows=rows, corpus=CORPUS, context_top_n=1), ["groundedness_lexical"])
    assert strict["groundedness_lexical"] == 75.0 and strict["hallucination_rate_lexical"] == 50.0
    loose, _, _ = evaluate_rows(EvalInputs(rows=rows, corpus=CORPUS, context_top_n=1, hr_delta=0.5),
                                ["groundedness_lexical"])
    assert loose["hallucination_rate_lexical"] == 0.0


def test_the_qa_metric_scores_what_the_run_scored():
    """evaluate.py's qa metric agrees with metrics.json: HolisQA's F1 scores the full response and JSR uses the
    reader's passage count, not the evaluator's context cut-off (review finding 1)."""
    rows = [{"id": "h1", "question": "Why?", "ranked_ids": ["p1", "p3", "p2"], "gold_ids": ["p1", "p2"],
             "answers": ["Warsaw lies on the Vistula, which flows into the Baltic Sea."],
             "answer": "Warsaw lies on the Vistula, which flows into the Baltic Sea.", "short_answer": "Baltic"}]
    full = EvalInputs(rows=[dict(r) for r in rows], corpus=CORPUS, context_top_n=2, answer_top_n=3,
                      f1_answer="full")
    short = EvalInputs(rows=[dict(r) for r in rows], corpus=CORPUS, context_top_n=2)
    agg_full, _, _ = evaluate_rows(full, ["qa"])
    agg_short, _, _ = evaluate_rows(short, ["qa"])
    assert agg_full["f1"] == 100.0 and agg_short["f1"] < 50.0
    assert agg_full["jsr"] == 100.0 and agg_short["jsr"] == 0.0  # the chain is in the top 3, not the top 2
