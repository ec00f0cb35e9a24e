"""Answer relevancy: embedding cosine and the Ragas-style LLM judge, on hand-picked vectors."""

import json
import math

import pytest
import torch

from hyperrag.eval.relevancy import embedding_answer_relevancy, llm_answer_relevancy, ragas_relevancy
from tests.eval.conftest import TableEncoder, schema_text, user_prompt

Q = "Where was Marie Curie born?"
ENC = TableEncoder({Q: [1, 0, 0], "Warsaw": [1, 1, 0], "Bananas are yellow.": [0, 1, 0],
                    "Where was Curie born?": [1, 0, 0], "What is the capital of Poland?": [0, 1, 0],
                    "What city was Marie Curie born in?": [1, 0, 0]})


def test_embedding_relevancy_is_the_cosine():
    out = embedding_answer_relevancy(ENC, [Q, Q, Q], ["Warsaw", "Bananas are yellow.", "I don't know"])
    assert out[0] == pytest.approx(1 / math.sqrt(2)) and out[1] == pytest.approx(0.0)
    assert out[2] == 0.0  # an abstention scores 0, it is not left out


def test_ragas_formula():
    q = torch.tensor([1.0, 0.0, 0.0])
    gen = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert ragas_relevancy(q, gen, noncommittal=False) == pytest.approx(0.5)
    assert ragas_relevancy(q, gen, noncommittal=True) == 0.0


def reverse_questions(body):
    assert '"noncommittal"' in schema_text(body)
    prompt = user_prompt(body)
    if "Warsaw" in prompt:
        return json.dumps({"questions": ["Where was Curie born?", "What city was Marie Curie born in?",
                                         "What is the capital of Poland?"], "noncommittal": False})
    return json.dumps({"questions": ["Where was Curie born?"], "noncommittal": True})


def test_llm_relevancy_mean_cosine_and_noncommittal(scripted_llm):
    llm = scripted_llm(reverse_questions)
    out = llm_answer_relevancy(llm, ENC, [Q, Q, Q], ["Warsaw", "The passages are unclear about that.", ""])
    assert out[0]["score"] == pytest.approx(2 / 3)  # cosines 1, 1, 0 to the question
    assert out[0]["questions"][2] == "What is the capital of Poland?" and not out[0]["noncommittal"]
    assert out[1]["score"] == 0.0 and out[1]["noncommittal"]
    assert out[2] == {"score": 0.0, "questions": [], "noncommittal": True}  # a failed (empty) answer scores 0


def test_judge_failure_is_not_a_score(scripted_llm):
    from tests.llm.fake_server import Reply

    llm = scripted_llm(lambda body: Reply(status=500, body="down"))
    out = llm_answer_relevancy(llm, ENC, [Q], ["Warsaw"])
    assert "judge_error" in out[0] and "score" not in out[0]


def test_context_recall_claims_llm_and_lexical(scripted_llm):
    from hyperrag.eval.context import lexical_claim_recall, llm_claim_recall

    def judge(body):
        prompt = user_prompt(body)
        assert "S2" in prompt
        return json.dumps({"attributed_ids": ["S1", "S9"]})

    llm = scripted_llm(judge)
    ref = "Curie was born in Warsaw. She won two Nobel prizes."
    out = llm_claim_recall(llm, [Q, Q], [ref, ref], ["Marie Curie was born in Warsaw in 1867.", ""])
    assert out[0] == {"score": 0.5, "attributed": [True, False]} and out[1]["score"] == 0.0  # empty context: 0
    assert lexical_claim_recall(ref, "Marie Curie was born in Warsaw in 1867.") == 0.5
    assert lexical_claim_recall(ref, "") == 0.0 and lexical_claim_recall("", "x") is None
