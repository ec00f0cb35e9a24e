"""Naive RAG and no retrieval: what the QA reader is given (checked on the prompts a scripted fake LLM server —
a test double — receives), and their rankings."""

import json
import re

import pytest

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.llm.tasks.grounded_answer import GroundedAnswer
from hyperrag.retrievers import DenseRetriever
from hyperrag.retrievers.naive import NaiveRAGRetriever
from hyperrag.retrievers.no_retrieval import NoRetrievalRetriever
from hyperrag.runners.batch_retrieval import run_batch_retrieval
from tests.hierarchy.fake_llm import fake_llm, prompt_of


def answer_anything(body):
    return json.dumps({"answer": "scripted", "supporting_ids": []})


@pytest.fixture(scope="module")
def sample():
    return sample_dataset()


def test_naive_gives_the_reader_the_dense_top_k(tmp_path, encoder, sample):
    naive = NaiveRAGRetriever(method_settings("naive"), encoder=encoder, device="cpu")
    dense = DenseRetriever(method_settings("dense"), encoder=encoder, device="cpu")
    naive.index(sample)
    dense.index(sample)
    questions = [q.question for q in sample.queries]
    assert naive.retrieve(questions, 10).indices.tolist() == dense.retrieve(questions, 10).indices.tolist()
    with fake_llm(answer_anything, tmp_path) as (llm, server):
        metrics = run_batch_retrieval(sample, naive, tmp_path / "run", llm=None, reader_llm=llm, answer_top_n=3)
        prompts = [prompt_of(b) for b in server.requests]
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "predictions.jsonl").read_text().splitlines())}
    assert len(prompts) == 6 and metrics["llm_steps_skipped"] == {}
    texts = {p.id: p.content for p in sample.corpus.passages}
    for prompt in prompts:
        row = next(r for r in rows.values() if r["question"] in prompt)
        shown = re.findall(r'<passage id="P\d+">\n(.*?)\n</passage>', prompt, re.DOTALL)
        assert shown == [texts[pid] for pid in row["ranked_ids"][:3]]  # exactly the top 3, in rank order
        assert row["answer"] == "scripted" and row["answer_source"] == "reader"


def test_no_retrieval_gives_the_reader_nothing(tmp_path, sample):
    ret = NoRetrievalRetriever(method_settings("no_retrieval"), device="cpu")
    ret.index(sample)
    with fake_llm(answer_anything, tmp_path) as (llm, server):
        metrics = run_batch_retrieval(sample, ret, tmp_path / "run", llm=None, reader_llm=llm)
        bodies = list(server.requests)
    assert len(bodies) == 6
    for body in bodies:
        system, user = body["messages"][0]["content"], prompt_of(body)
        assert "<passage" not in user and "Passages" not in user
        assert system.startswith(GroundedAnswer.CLOSED_BOOK_ROLE)
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert all(r["ranked_ids"] == [] and r["answer"] == "scripted" for r in rows)
    assert metrics["recall@5"] == 0.0 and metrics["fcr@5"] == 0.0 and metrics["em"] == 0.0


def test_closed_book_prompt_leaves_other_prompts_unchanged():
    task = GroundedAnswer()
    with_passages = task.messages({"question": "Who?", "passages": ["Some text."]})
    assert with_passages[0]["content"].startswith(task.ROLE)
    assert '"supporting_ids": ["P..", ...]' in with_passages[1]["content"]
    closed = task.messages({"question": "Who?", "passages": []})
    assert closed[0]["content"].startswith(task.CLOSED_BOOK_ROLE) and '"supporting_ids": []' in closed[1]["content"]
