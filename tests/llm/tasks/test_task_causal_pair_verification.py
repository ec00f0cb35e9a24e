"""causal_pair_verification (CDF-RAG Appendix A.2): correctness, direction, rephrased statement, confidence."""

import pytest

from hyperrag.llm.tasks.causal_pair_verification import CausalPairVerification

INPUTS = {"cause": "Heavy rainfall", "effect": "River flooding", "context": ["Heavy rain caused the Vistula to flood."],
          "domain": "hydrology", "dataset": "musique", "source_model": "UniCausal pair classifier"}


@pytest.mark.parametrize("raw,expected", [
    (('{"correct": true, "direction": "as_given", "refined": "Heavy rainfall causes river flooding.", '
     '"justification": "Rain raises rivers.", "confidence": "High"}'),
     {"causal": True, "direction": "a->b", "confidence": 1.0, "confidence_label": "High",
      "statement": "Heavy rainfall causes river flooding.", "justification": "Rain raises rivers."}),
    (('{"correct": true, "direction": "vice versa", "refined": "River flooding causes heavy rainfall.", '
     '"confidence": "medium"}'),
     {"causal": True, "direction": "b->a", "confidence": 2 / 3, "confidence_label": "Medium",
      "statement": "River flooding causes heavy rainfall.", "justification": ""}),
    ('{"correct": false, "refined": "", "justification": "only correlated", "confidence": "Low"}',
     {"causal": False, "direction": None, "confidence": 1 / 3, "confidence_label": "Low", "statement": "",
      "justification": "only correlated"}),
])
def test_verdicts(raw, expected):
    assert CausalPairVerification().parse(raw, INPUTS).value == expected


def test_prompt_follows_the_paper_structure():
    """Role as a domain expert, contextual metadata, the pair, the four questions, the output format."""
    system, user = (m["content"] for m in CausalPairVerification().messages(INPUTS))
    assert "specialist in hydrology" in system
    for needle in ("Domain: hydrology", "Dataset: musique", "Extracted by: UniCausal pair classifier",
                   '<passage id="S1">', "Candidate cause:", "Candidate effect:", "(1)", "(4)", '"confidence"',
                   '"refined"'):
        assert needle in user
    bare = CausalPairVerification().messages({"cause": "a", "effect": "b"})
    assert "Domain: unspecified" in bare[1]["content"] and "the subject of the document" in bare[0]["content"]


def test_bad_confidence_is_invalid():
    from hyperrag.llm.errors import OutputInvalid

    with pytest.raises((OutputInvalid, ValueError)):
        CausalPairVerification().parse('{"correct": true, "confidence": "certain"}', INPUTS)
