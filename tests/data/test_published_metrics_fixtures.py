"""Published metrics computed on tiny fixtures in their releases' layouts: CatRAG Table 3's HoVer accuracy (the
claims read with SUPPORTED / NOT_SUPPORTED as options) and CDF-RAG Tables 3-5's metrics (accuracy — EM standing
in on extractive AdversarialQA — precision, recall, F1, the hallucination rate from an LLM verifier, groundedness
by sentence-embedding similarity and by span alignment). The verifier is the scripted fake server (a test double
speaking the OpenAI protocol on loopback); the oracle reads the answers (an upper bound)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hyperrag.data.hover import LABELS
from hyperrag.data.paper_data import paper_dataset
from hyperrag.errors import InputError
from hyperrag.eval.suite import METRICS
from hyperrag.reporting.published import load_published
from tests.data.test_cdfrag_paper_datasets import SQUAD, write
from tests.llm.fake_server import FakeOpenAIServer
from tests.test_evaluate_entry import compose_evaluate, evaluate, judge
from tests.test_retrieve_entry import compose_retrieve, retrieve

HOVER = [{"_id": "h1", "question": "Ada Quill was born in Marrow.", "answer": "SUPPORTED",
          "supporting_facts": [["Ada Quill", 0], ["Marrow", 0]]},
         {"_id": "h2", "question": "The Tessel River flows north.", "label": "NOT_SUPPORTED",
          "answer": "NOT_SUPPORTED", "supporting_facts": [["Tessel River", 0]]},
         {"_id": "h3", "question": "Marrow lies on the Tessel River.", "answer": ["supported"],
          "supporting_facts": [["Marrow", 0], ["Tessel River", 0]]}]
HOVER_CORPUS = [{"title": "Ada Quill", "text": "Ada Quill, a cartographer, was born in Marrow."},
                {"title": "Marrow", "text": "Marrow is a town on the Tessel River."},
                {"title": "Tessel River", "text": "The Tessel River flows south into Lake Varn."},
                {"title": "Lake Varn", "text": "Lake Varn is a lake."}]


@pytest.fixture
def hover(tmp_path: Path) -> Path:
    (tmp_path / "hover.json").write_text(json.dumps(HOVER))  # the release's files are JSON lists
    (tmp_path / "hover_corpus.json").write_text(json.dumps(HOVER_CORPUS))
    return tmp_path


def test_hover_claims_in_the_release_layout_offer_the_two_labels(hover):
    ds = paper_dataset(hover, "hover")
    assert [q.options for q in ds.queries] == [LABELS] * 3
    assert [q.answer_index for q in ds.queries] == [0, 1, 0] and ds.queries[2].answers == ("SUPPORTED",)
    bad = [{**HOVER[0], "answer": "MAYBE"}]
    (hover / "hover.json").write_text(json.dumps(bad))
    with pytest.raises(InputError) as err:
        paper_dataset(hover, "hover")
    assert "hover.json" in str(err.value) and "field 'answer'" in str(err.value) and "MAYBE" in str(err.value)


@pytest.mark.slow  # a retrieve run (bm25 + the oracle reader) on the fixture
def test_hover_accuracy_is_computed_by_a_run(hover, tmp_path):
    metrics = retrieve.run(compose_retrieve(tmp_path, "data=paper", "data.name=hover", f"paper_data={hover}",
                                            "method=bm25", "llm=oracle", "tracking=none", "answer_top_n=2"))
    assert "accuracy" in metrics and 0.0 <= metrics["accuracy"] <= 100.0
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert all(r["options"] == list(LABELS) for r in rows)
    right = sum(r["answer"].strip().upper() == LABELS[r["answer_index"]] for r in rows)
    assert metrics["accuracy"] == pytest.approx(100.0 * right / 3)


def test_every_cdfrag_table_metric_is_a_metric_the_suite_computes():
    """Tables 3-5 name no metric that evaluate.py cannot produce (``hallucination_rate`` comes from the LLM
    verifier's ``groundedness``, ``f1`` from ``qa``, ``precision`` / ``recall`` from ``answer_overlap``)."""
    produced = {"em", "f1", "match_acc", "jsr", "accuracy", "precision", "recall", "hallucination_rate", "ccd",
                "srs", "crc", "context_relevance", "groundedness", "groundedness_emb", "groundedness_span"}
    assert {"groundedness_emb", "answer_overlap", "groundedness", "qa", "crc", "ccd", "srs"} <= set(METRICS)
    for table in load_published():
        if table.id in ("cdfrag_table3", "cdfrag_table4", "cdfrag_table5"):
            assert set(table.metrics.values()) <= produced, table.id
    table3 = next(t for t in load_published() if t.id == "cdfrag_table3")
    assert table3.metrics["Groundedness"] == "groundedness_emb"  # §4.3: sentence-embedding similarity


@pytest.mark.slow  # a retrieve run, then evaluate.py with MiniLM and the scripted verifier
def test_cdfrag_tables_4_5_metrics_on_the_adversarialqa_fixture(tmp_path):
    paper = tmp_path / "paper"
    write(paper, "adversarialqa/combined/dev.json", SQUAD)
    retrieve.run(compose_retrieve(tmp_path, "data=paper", "data.name=adversarialqa", f"paper_data={paper}",
                                  "method=bm25", "llm=oracle", "tracking=none", "answer_top_n=1"))
    run_dir = tmp_path / "run"
    with FakeOpenAIServer(responder=judge) as server:
        cfg = compose_evaluate(tmp_path, f"predictions={run_dir}", "data=paper", "data.name=adversarialqa",
                               f"data.dir={paper}", "llm=openai_compatible", f"llm.base_url={server.base_url}",
                               "llm.model=fake-verifier", "llm.show_usage=false",
                               "metrics=[qa,answer_overlap,groundedness,groundedness_emb,groundedness_span]")
        cfg.llm.api_key_env = None
        (record,) = evaluate.run(cfg)
        assert server.stats["requests"] > 0  # the verifier judged the answers' claims
    m = record["metrics"]
    for key in ("em", "f1", "precision", "recall", "hallucination_rate", "groundedness_emb", "groundedness_span"):
        assert key in m and 0.0 <= m[key] <= 100.0, key
    assert m["hallucination_rate"] == pytest.approx(100.0 - m["groundedness"])
    per = [json.loads(x) for x in (run_dir / "evaluation.jsonl").read_text().splitlines()]
    assert all(p["groundedness_emb"] is None or -1.0 <= p["groundedness_emb"] <= 1.0 for p in per)
    # the report sets EM against Table 1 / 4's AdversarialQA accuracy and says so; HR has its command
    from hyperrag.reporting.collect import find_runs
    from hyperrag.reporting.paper_rows import STAND_IN_METRICS, ours_metric

    (run,) = find_runs([str(run_dir)])
    assert ours_metric(run, "accuracy", "adversarialqa") == "em"
    assert "extractive" in STAND_IN_METRICS[("accuracy", "adversarialqa")][1]
