"""claim_support: verdict with checked evidence IDs."""

from hyperrag.llm.tasks.claim_support import ClaimSupport

INPUTS = {"claim": "Marie Curie was born in Kraków.",
          "passages": [("p01", "Marie Curie was born in Warsaw."), ("p02", "Kraków is in southern Poland.")]}


def test_refuted_with_evidence():
    parsed = ClaimSupport().parse('{"verdict": "Refuted", "evidence_ids": ["P1", "P5"], "reason": "Born in Warsaw."}',
                                  INPUTS)
    assert parsed.value == {"verdict": "refuted", "evidence": ["p01"]} and parsed.dropped_ids == 1


def test_nei_alias():
    assert ClaimSupport().parse('{"verdict": "NEI", "evidence_ids": [], "reason": ""}', INPUTS).value["verdict"] == \
        "not_enough_info"
