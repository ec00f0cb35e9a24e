"""Multiple choice end to end: options reach the QA reader (scripted fake LLM server — a test double), the answer is
one option, and ``accuracy`` is scored by the batch runner and by re-scoring (evaluate.py's suite)."""

from __future__ import annotations

import json

import pytest

from hyperrag.config import method_settings
from hyperrag.data.multiple_choice import read_multiple_choice
from hyperrag.eval.qa import option_accuracy, option_correct, parse_option
from hyperrag.eval.suite import EvalInputs, evaluate_rows
from hyperrag.retrievers import BM25Retriever
from hyperrag.runners.batch_retrieval import run_batch_retrieval
from tests.data.benchmark_fixtures import TITLES, multiple_choice_records, text_of, write_jsonl
from tests.eval.conftest import user_prompt

OPTIONS = ["Paris", "London", "New York", "York"]


@pytest.mark.parametrize("answer, expected", [
    ("B", 1), ("b", 1), ("(C)", 2), ("D.", 3), ("E", None),      # letters (E: no fifth option)
    ("paris", 0), ("York", 3), ("The answer is New York", 2),    # texts; "New York" contains "York"
    ("B) London", 1), ("(A) Paris", 0), ("Paris or London", None), ("", None), ("Berlin", None),
])
def test_parse_option(answer, expected):
    assert parse_option(answer, OPTIONS) == expected


def test_parse_option_reads_labels_with_underscores():
    labels = ["SUPPORTED", "NOT_SUPPORTED"]
    assert [parse_option(a, labels) for a in ("not supported", "The claim is not supported.", "supported")] == [1, 1, 0]


def test_option_accuracy_counts_only_multiple_choice_queries_with_a_known_answer():
    m = option_accuracy(["B", "Paris", "x", "free text"], [OPTIONS, OPTIONS, OPTIONS, []], [1, 1, None, None])
    assert m == {"accuracy": 50.0}
    assert option_accuracy(["x"], [[]], [None]) == {}
    assert option_correct("York", OPTIONS, 3) == 1.0 and option_correct("York", OPTIONS, None) is None


def test_suite_accuracy_needs_options():
    rows = [{"id": "a", "question": "?", "ranked_ids": [], "answer": "London", "options": OPTIONS, "answer_index": 1},
            {"id": "b", "question": "?", "ranked_ids": [], "answer": "A", "options": OPTIONS, "answer_index": 1},
            {"id": "c", "question": "?", "ranked_ids": [], "answer": "free", "answers": ["free"]}]
    agg, per, _ = evaluate_rows(EvalInputs(rows=rows), "auto")
    assert agg["accuracy"] == 50.0 and [p["accuracy"] for p in per] == [1.0, 0.0, None]
    _, _, skipped = evaluate_rows(EvalInputs(rows=rows[2:]), ["accuracy"])
    assert skipped == {"accuracy": "needs options"}


def mc_reader(body: dict) -> str:
    """Scripted replies: one per question; the first question's first reply names no option and is re-asked."""
    prompt = user_prompt(body)
    if prompt.startswith("Your previous reply could not be used"):  # the session's repair request
        return json.dumps({"answer": "B", "supporting_ids": ["P1"]})
    question = prompt.split("Question:\n<data>\n")[1].split("\n</data>")[0]
    assert "Options:\n<data>\nA. " in prompt  # every question here is multiple choice
    replies = {"Which river flows out of Lake Varn?": "the long one",  # → re-asked → "B" (correct)
               "When was Marrow founded?": "1702",                     # option text (correct)
               "Who mapped the Tessel River basin?": "(A) Brin Hollow",  # wrong: C is correct
               "What was the narrator's job likely to be?": "b"}         # lower-case letter (correct)
    return json.dumps({"answer": replies[question], "supporting_ids": ["P1"]})


def test_batch_runner_passes_options_and_scores_accuracy(tmp_path, scripted_llm):
    queries = write_jsonl(tmp_path / "dev.jsonl", multiple_choice_records())
    corpus = write_jsonl(tmp_path / "passages.jsonl", [{"title": t, "text": text_of(t)} for t in TITLES])
    ds = read_multiple_choice(queries, corpus, cop_base=0)
    retriever = BM25Retriever(method_settings("bm25"))
    retriever.index(ds)
    llm = scripted_llm(mc_reader)
    metrics = run_batch_retrieval(ds, retriever, tmp_path / "run", top_k=3, ks=(1, 3), accelerator="cpu",
                                  llm=llm, answer_top_n=2)
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [r["answer_option"] for r in rows] == [1, 1, 0, 1]
    assert [r["answer_index"] for r in rows] == [1, 1, 2, 1]
    assert rows[0]["options"] == ["Marrow Brook", "Tessel River", "Brin Creek"]
    assert rows[0]["answer"] == "Tessel River" and all(r["answer_ok"] for r in rows)
    assert metrics["accuracy"] == 75.0 and metrics["em"] == 75.0 and metrics["answer_failures"] == 0
    assert llm.accounting.total().repair_rounds == 1  # "the long one" named no option and was re-asked
    rescored, _, _ = evaluate_rows(EvalInputs(rows=rows), ["accuracy", "qa"])
    assert rescored["accuracy"] == 75.0 and rescored["em"] == 75.0
