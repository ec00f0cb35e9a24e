"""causal_pair_verification (CDF-RAG): relation, direction, confidence."""

import pytest

from hyperrag.llm.tasks.causal_pair_verification import CausalPairVerification

INPUTS = {"a": "Heavy rainfall", "b": "River flooding", "context": ["Heavy rain caused the Vistula to flood."]}


@pytest.mark.parametrize("raw,expected", [
    ('{"relation": "a_causes_b", "confidence": 9, "reason": "Rain raises rivers."}',
     {"causal": True, "direction": "a->b", "confidence": 0.9}),
    ('{"relation": "B_TO_A", "confidence": "7", "reason": "reverse"}',
     {"causal": True, "direction": "b->a", "confidence": 0.7}),
    ('{"relation": "none", "confidence": 11, "reason": "correlated only"}',
     {"causal": False, "direction": None, "confidence": 1.0}),
])
def test_verdicts(raw, expected):
    assert CausalPairVerification().parse(raw, INPUTS).value == expected


def test_prompt_has_context():
    assert '<passage id="P1">' in CausalPairVerification().messages(INPUTS)[1]["content"]
