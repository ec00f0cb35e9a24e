"""CDF-RAG Table 3's metrics (CRC, CCD, SRS, groundedness by sentence embeddings and by span alignment, the
hallucination rate, F1) computed by ``evaluate.py`` with the metric names docs/reproduce.md gives, on the tiny
AdversarialQA fixture in its release layout (SQuAD JSON). The LLM verifier is the scripted fake server (a test double
speaking the OpenAI protocol on loopback, ``tests.test_evaluate_entry.judge``: a claim is supported iff it occurs in a
shown passage). The fast test runs the suite's Table 3 metrics in-process on hand-made CDF-RAG prediction rows whose
figures are known (embeddings from a hand-made table encoder); the slow ones run ``evaluate.py`` (with MiniLM) on those
rows and on what two ablation stages of the real ``experiment=cdfrag_ablation`` preset wrote (the oracle as the
run's LLM: a gold-informed upper bound)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hyperrag.data.paper_data import paper_dataset
from hyperrag.eval.rescore import causal_reference
from hyperrag.eval.suite import EvalInputs, evaluate_rows
from tests.data.test_cdfrag_paper_datasets import SQUAD, write
from tests.eval.conftest import TableEncoder
from tests.llm.fake_server import FakeOpenAIServer
from tests.test_evaluate_entry import compose_evaluate, evaluate, judge
from tests.test_retrieve_entry import compose_retrieve, retrieve

NAMES = ["crc", "ccd", "srs", "groundedness_emb", "groundedness_span", "groundedness", "qa"]
TABLE3 = f"metrics=[{','.join(NAMES)}]"  # docs/reproduce.md's command

# what a CDF-RAG run writes per query (its ``details``), cut to the fields Table 3 reads; passages of the fixture:
# 0-0 "Warsaw lies on the Vistula river. The river floods in spring because snow melts upstream.", 0-1 "The old town
# was rebuilt after the war."
ROWS = [{"id": "a1", "question": "Why does the river flood in spring?", "ranked_ids": ["0-0", "0-1"],
         "gold_ids": ["0-0"], "answers": ["because snow melts upstream"], "answer": "because snow melts upstream",
         "details": {"causal_pairs": [["snow melts upstream", "the river floods in spring", "0-0", ""]],
                     "causal_path_depths": [1, 2], "refinement_similarity": 0.7}},
        {"id": "a2", "question": "Which river does Warsaw lie on?", "ranked_ids": ["0-0", "0-1"],
         "gold_ids": ["0-0"], "answers": ["the Vistula", "Vistula"], "answer": "the Vistula",
         "details": {"causal_pairs": [], "causal_path_depths": [], "refinement_similarity": 0.5}},
        {"id": "a3", "question": "When was the old town rebuilt?", "ranked_ids": ["0-1", "0-0"],
         "gold_ids": ["0-1"], "answers": ["after the war"], "answer": "Atlantis", "details": {}}]


def score(tmp_path: Path, paper: Path, predictions: Path) -> tuple[dict, list[dict]]:
    """evaluate.py's Table 3 command on ``predictions`` with the scripted verifier as ``llm``."""
    with FakeOpenAIServer(responder=judge) as server:
        cfg = compose_evaluate(tmp_path, f"predictions={predictions}", "data=paper", "data.name=adversarialqa",
                               f"data.dir={paper}", "llm=openai_compatible", f"llm.base_url={server.base_url}",
                               "llm.model=scripted-verifier", "llm.show_usage=false", "context_top_n=2", TABLE3)
        cfg.llm.api_key_env = None
        (record,) = evaluate.run(cfg)
        assert server.stats["requests"] > 0  # the verifier judged the answers' claims
    per = [json.loads(x) for x in (predictions.parent / "evaluation.jsonl").read_text().splitlines()]
    return record, per


def test_table3_metric_functions_on_hand_made_cdfrag_rows(tmp_path, scripted_llm):
    """In-process: the suite's Table 3 metrics, CRC's reference as evaluate.py builds it (``crc_reference=gold``)."""
    paper = write(tmp_path / "paper", "adversarialqa/combined/dev.json", SQUAD).parents[2]
    corpus = paper_dataset(paper, "adversarialqa").corpus
    text = {pid: corpus[corpus.position(pid)].content for pid in ("0-0", "0-1")}
    # hand-made unit vectors: a1's answer and its triple point along passage 0-0, a2's answer between the two
    # passages (cosine 0.6 with 0-0, 0.8 with 0-1), a3's elsewhere (cosine 0)
    enc = TableEncoder({text["0-0"]: [1, 0, 0], text["0-1"]: [0, 1, 0], "because snow melts upstream": [1, 0, 0],
                        "snow melts upstream causes the river floods in spring": [1, 0, 0],
                        "the Vistula": [0.6, 0.8, 0]})
    rows = [dict(r) for r in ROWS]
    reference = causal_reference({"crc_reference": "gold"}, {}, None, rows, enc, None)
    e = EvalInputs(rows=rows, corpus=corpus, llm=scripted_llm(judge), encoder=enc, context_top_n=2,
                   causal_reference=reference)
    m, per, skipped = evaluate_rows(e, NAMES)
    assert skipped == {}
    # CRC against the gold passages (no causal index: no reference pairs): a1 1 of 3 items (two passages, one
    # triple), a2 1 of 2, a3 1 of 2
    assert m["crc"] == pytest.approx(100 * (1 / 3 + 1 / 2 + 1 / 2) / 3, abs=1e-3)
    assert m["ccd"] == pytest.approx(1.5)  # hops, over the one query with paths
    assert m["srs"] == pytest.approx(60.0)  # mean refinement similarity, queries without a refinement left out
    assert m["groundedness_emb"] == pytest.approx(100 * (1.0 + 0.8 + 0.0) / 3, abs=1e-3)
    assert [p["groundedness_span"] for p in per] == [1.0, 1.0, 0.0]
    # the scripted verifier finds a1's and a2's answers in a shown passage, not a3's: HR = 100 - groundedness
    assert m["groundedness"] == pytest.approx(200 / 3, abs=1e-3)
    assert m["hallucination_rate"] == pytest.approx(100 / 3, abs=1e-3)
    assert m["em"] == pytest.approx(200 / 3, abs=1e-3) and m["f1"] == pytest.approx(200 / 3, abs=1e-3)


@pytest.mark.slow  # evaluate.py loads MiniLM (~10 s on two shared cores)
def test_table3_metrics_on_a_hand_made_cdfrag_predictions_file(tmp_path):
    paper = write(tmp_path / "paper", "adversarialqa/combined/dev.json", SQUAD).parents[2]
    pred = write(tmp_path / "run", "predictions.jsonl", ROWS)
    write(tmp_path / "run", "metrics.json", {"dataset": "adversarialqa", "method": "cdfrag", "metrics": {}})
    record, per = score(tmp_path, paper, pred)
    m = record["metrics"]
    assert record["skipped"] == {}
    # CRC against the gold passages (no causal index here: no reference pairs): a1 1 of 3 items (two passages, one
    # triple), a2 1 of 2, a3 1 of 2
    assert m["crc"] == pytest.approx(100 * (1 / 3 + 1 / 2 + 1 / 2) / 3, abs=1e-3)
    assert m["ccd"] == pytest.approx(1.5)  # hops, over the one query with paths
    assert m["srs"] == pytest.approx(60.0)  # mean refinement similarity, queries without a refinement left out
    assert m["em"] == pytest.approx(200 / 3, abs=1e-3) and m["f1"] == pytest.approx(200 / 3, abs=1e-3)
    # the scripted verifier finds a1's and a2's answers in a shown passage, not a3's
    assert m["groundedness"] == pytest.approx(200 / 3, abs=1e-3)
    assert m["hallucination_rate"] == pytest.approx(100 / 3, abs=1e-3)
    for key in ("groundedness_emb", "groundedness_span"):
        assert 0.0 <= m[key] <= 100.0, key
    assert [p["groundedness_span"] for p in per] == [1.0, 1.0, 0.0]
    assert per[0]["groundedness_emb"] > per[2]["groundedness_emb"]  # an answer in the evidence vs one nowhere


@pytest.mark.slow  # two cdfrag runs (the full stage cross-fits three PPO policies), then evaluate.py with MiniLM
def test_table3_on_the_adversarialqa_fixture_from_two_ablation_stages(tmp_path):
    paper = write(tmp_path / "paper", "adversarialqa/combined/dev.json", SQUAD).parents[2]
    runs = {}
    for stage, folds in (("baseline", "cv_folds=null"), ("full", "cv_folds=3")):  # 3 queries: 3 folds, not 5
        cfg = compose_retrieve(tmp_path / stage, "experiment=cdfrag_ablation", f"cdfrag_stage={stage}",
                               "data.name=adversarialqa", f"paper_data={paper}", "llm=oracle", "tracking=none",
                               folds)
        metrics = retrieve.run(cfg)
        assert metrics["queries"] == 3
        runs[stage] = score(tmp_path / stage, paper, tmp_path / stage / "run" / "predictions.jsonl")
    for stage, (record, _) in runs.items():
        m = record["metrics"]
        for key in ("crc", "groundedness_emb", "groundedness_span", "groundedness", "hallucination_rate", "f1"):
            assert key in m and 0.0 <= m[key] <= 100.0, (stage, key)
    base, full = runs["baseline"][0], runs["full"][0]
    # stage 1 has no causal paths (an empty list each: CCD has no value) and no refinement (SRS skipped, with why)
    assert set(base["skipped"]) <= {"ccd", "srs"} and "srs" in base["skipped"]
    assert "ccd" not in base["metrics"] and "srs" not in base["metrics"]
    # the full stage refines the query and retrieves causal paths
    assert full["skipped"] == {} and full["metrics"]["ccd"] >= 1.0 and 0.0 <= full["metrics"]["srs"] <= 100.0
