"""Groundedness and hallucination rate: the lexical judge and the LLM judge (scripted fake server)."""

import json

import pytest

from hyperrag.eval.groundedness import hallucination_rate, lexical_groundedness, llm_groundedness
from tests.eval.conftest import schema_text, user_prompt

CONTEXT = "Marie Curie was born in Warsaw. Warsaw lies on the Vistula river, which flows into the Baltic Sea."


def test_lexical_groundedness_known_values():
    assert lexical_groundedness("Baltic Sea", CONTEXT) == 1.0
    assert lexical_groundedness("North Sea", CONTEXT) == 0.0  # "north" missing: 1 of 2 content words < 0.8
    # two claims, one supported
    assert lexical_groundedness("Marie Curie was born in Warsaw. She won three Oscars.", CONTEXT) == 0.5
    assert lexical_groundedness("North Sea", CONTEXT, threshold=0.5) == 1.0
    assert lexical_groundedness("unknown", CONTEXT) is None and lexical_groundedness("", CONTEXT) is None


def test_hallucination_rate_over_answered_queries():
    assert hallucination_rate([1.0, 0.5, None, 0.0]) == pytest.approx(0.5)
    assert hallucination_rate([None]) is None


def judge(body):
    """Claims: each answer sentence; verdict: supported iff the claim mentions Warsaw or Baltic."""
    spec, prompt = schema_text(body), user_prompt(body)
    if '"claims"' in spec:
        text = prompt.split("Text:")[1].split("<data>")[1].split("</data>")[0].strip()
        return json.dumps({"claims": [s.strip() + "." for s in text.split(".") if s.strip()]})
    if '"verdict"' in spec:
        claim = prompt.split("Claim:")[1]
        ok = "Warsaw" in claim or "Baltic" in claim
        return json.dumps({"verdict": "supported" if ok else "not_enough_info", "evidence_ids": ["P1"] if ok else [],
                           "reason": ""})
    raise AssertionError(spec)


def test_llm_groundedness_scores_claims(scripted_llm):
    llm = scripted_llm(judge)
    ctx = [("p1", CONTEXT)]
    out = llm_groundedness(llm, ["Born in Warsaw. She won three Oscars", "The Baltic Sea", "unknown", None],
                           [ctx, ctx, ctx, ctx], questions=["q1", "q2", "q3", "q4"])
    assert out[0]["score"] == 0.5 and [c["verdict"] for c in out[0]["claims"]] == ["supported", "not_enough_info"]
    assert out[0]["claims"][0]["evidence"] == ["p1"]
    assert out[1]["score"] == 1.0
    assert out[2] is None and out[3] is None  # abstention and missing answer are not judged
    assert hallucination_rate([o["score"] if o else None for o in out]) == pytest.approx(0.25)
