"""evaluate.py: re-score a retrieve.py run without retrieving again (retrieval metrics match; LLM judges
through the scripted fake server)."""

import json
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from tests.conftest import REPO_ROOT
from tests.eval.conftest import schema_text, user_prompt
from tests.llm.fake_server import FakeOpenAIServer
from tests.test_retrieve_entry import compose_retrieve, retrieve

sys.path.insert(0, str(REPO_ROOT))
import evaluate


def compose_evaluate(tmp_path: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("evaluate", overrides=[f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", *overrides])


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval")
    metrics = retrieve.run(compose_retrieve(tmp, "method=bm25", "tracking=none"))
    return tmp / "run", metrics


def test_rescoring_reproduces_retrieval_metrics(sample_run, tmp_path):
    run_dir, metrics = sample_run
    (record,) = evaluate.run(compose_evaluate(tmp_path, f"predictions={run_dir}", f"out={tmp_path / 'scores'}"))
    for k in ("recall@2", "recall@5", "recall@10", "fcr@5"):
        assert record["metrics"][k] == pytest.approx(metrics[k], abs=1e-3)
    assert record["metrics"]["context_recall"] == pytest.approx(metrics["recall@5"], abs=1e-3)  # answer_top_n=5
    assert record["dataset"] == "sample" and record["method"] == "bm25" and record["context_top_n"] == 5
    assert "qa" not in record["metrics"] and not (run_dir / "evaluation.json").exists()  # out= respected
    saved = json.loads((tmp_path / "scores" / "evaluation.json").read_text())
    assert saved["metrics"] == record["metrics"]
    assert len((tmp_path / "scores" / "evaluation.jsonl").read_text().splitlines()) == 6


def judge(body):
    """Claims: the answer itself; supported iff it occurs in a shown passage. Relevancy: echoes a question."""
    spec, prompt = schema_text(body), user_prompt(body)
    if '"claims"' in spec:
        return json.dumps({"claims": [prompt.split("Text:")[1].split("<data>")[1].split("</data>")[0].strip()]})
    if '"verdict"' in spec:
        claim = prompt.split("Claim:")[1].split("<data>")[1].split("</data>")[0].strip()
        ok = claim.lower() in prompt.split("Claim:")[0].lower()
        return json.dumps({"verdict": "supported" if ok else "refuted", "evidence_ids": [], "reason": ""})
    if '"noncommittal"' in spec:
        return json.dumps({"questions": ["Who was the husband of Marie Curie's elder daughter?"], "noncommittal": False})
    raise AssertionError(spec)


def test_llm_judges_on_answers(sample_run, tmp_path):
    run_dir, _ = sample_run
    rows = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    # a reader's answers: the gold answer for q1-q3, an invented one for q4, an abstention for q5, none for q6
    for r, ans in zip(rows, [None, None, None, "Atlantis", "unknown", ""]):
        r["answer"] = r["answers"][0] if ans is None else ans
    pred = tmp_path / "answered" / "predictions.jsonl"
    pred.parent.mkdir()
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (pred.parent / "metrics.json").write_text((run_dir / "metrics.json").read_text())
    with FakeOpenAIServer(responder=judge) as server:
        cfg = compose_evaluate(tmp_path, f"predictions={pred}", "data=sample", "llm=openai_compatible",
                               f"llm.base_url={server.base_url}", "llm.model=fake-model", "llm.show_usage=false",
                               "metrics=[qa,groundedness,groundedness_lexical,answer_relevancy]")
        cfg.llm.api_key_env = None
        (record,) = evaluate.run(cfg)
        assert server.stats["requests"] == 4 + 4 + 4  # 4 answered: claims, support, relevancy
    m = record["metrics"]
    # what the judges cost: the calls the server saw, per 1,000 of the 6 queries, as the report's judge column
    assert m["cost.evaluate.judge.llm_calls"] == 12 and m["cost.evaluate.judge.llm_calls_per_1k_queries"] == 2000.0
    assert m["cost.evaluate.judge.prompt_tokens"] > 0 and m["cost.evaluate.seconds"] > 0
    from hyperrag.reporting.collect import load_run
    from hyperrag.reporting.cost import cost_table

    table = cost_table([load_run(pred.parent / "metrics.json")])
    assert "judge calls / 1k q" in table.splitlines()[0] and "| 2,000 |" in table
    assert m["em"] == pytest.approx(50.0)  # 3 of 6 exact
    assert m["hallucination_rate"] == pytest.approx(100.0 - m["groundedness"])
    assert m["hallucination_rate_lexical"] == pytest.approx(100.0 - m["groundedness_lexical"])
    per = [json.loads(line) for line in (pred.parent / "evaluation.jsonl").read_text().splitlines()]
    assert per[3]["groundedness"] == 0.0 and per[3]["claims"][0]["verdict"] == "refuted"  # Atlantis
    assert per[4]["groundedness"] is None and per[5]["groundedness"] is None  # abstention / empty: not judged
    assert per[2]["answer_relevancy"] == pytest.approx(1.0, abs=1e-4)  # q3's own question regenerated
    assert 0.0 < per[0]["answer_relevancy"] < 1.0


def test_no_predictions_is_an_input_error(tmp_path):
    from hyperrag.errors import InputError

    with pytest.raises(InputError, match="no predictions.jsonl found"):
        evaluate.run(compose_evaluate(tmp_path, f"predictions={tmp_path / 'nothing'}"))


def test_gold_sentences_and_causal_pairs_from_the_query_file(tmp_path):
    """A HolisQA-style query file (gold sentences, causal pairs) read by data=jsonl: evaluate.py joins the
    extra gold fields from the run's own query file and scores sentence-level context recall."""
    sample = REPO_ROOT / "hyperrag" / "sample_data"
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({
        "id": "h1", "question": "Into which sea does the river of Marie Curie's birthplace flow?",
        "answers": ["Baltic Sea"], "gold_ids": ["p01", "p02", "p03"],
        "gold_sentences": [
            {"id": "p01#s0", "passage_id": "p01", "text": "Marie Curie was a physicist and chemist who was born in Warsaw in 1867."},
            {"id": "p02#s1", "passage_id": "p02", "text": "The city stands on the Vistula River in east-central Poland and is home to the Maria Sklodowska-Curie Museum."},
            {"id": "p03#s1", "passage_id": "p03", "text": "It rises in the Silesian Beskids and flows north through Krakow and Warsaw before emptying into the Baltic Sea near Gdansk."}],
        "causal_pairs": [["p03", "p02"], {"cause": "Silesian Beskids", "effect": "a river no passage names"}]}) + "\n")
    retrieve.run(compose_retrieve(tmp_path, "method=bm25", "tracking=none", "data=jsonl",
                                  f"data.corpus={sample / 'corpus.jsonl'}", f"data.queries={queries}"))
    (row,) = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert "gold_sentences" not in row  # the retriever's rows carry passage gold only
    top2 = set(row["ranked_ids"][:2])
    (record,) = evaluate.run(compose_evaluate(tmp_path, f"predictions={tmp_path / 'run'}", "context_top_n=2"))
    m = record["metrics"]
    # each gold sentence is covered when its passage is in the top 2
    assert m["context_recall"] == pytest.approx(100.0 * len(top2 & {"p01", "p02", "p03"}) / 3, abs=1e-3)
    # pair 1 needs p03 and p02 in the top 2; pair 2's effect is nowhere in the corpus
    assert m["causal_coverage"] == pytest.approx(100.0 * ({"p02", "p03"} <= top2) / 2)
    (record,) = evaluate.run(compose_evaluate(tmp_path, f"predictions={tmp_path / 'run'}", "context_top_n=10"))
    assert record["metrics"]["context_recall"] == 100.0 and record["metrics"]["causal_coverage"] == 50.0
    (per,) = [json.loads(line) for line in (tmp_path / "run" / "evaluation.jsonl").read_text().splitlines()]
    assert per["id"] == "h1" and per["context_recall"] == 1.0 and per["causal_coverage"] == 0.5
