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
    assert out[0] == pytest.approx(1 / math.sqrt(2)) and out[1] == pytest.approx(0.0) and out[2] is None


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
    assert out[2] is None
