"""claim_extraction: atomic claims, deduplicated."""

from hyperrag.llm.tasks.claim_extraction import ClaimExtraction


def test_claims():
    inputs = {"question": "Who was Marie Curie?", "text": "A physicist born in Warsaw who won two Nobel Prizes."}
    raw = ('```\n{"claims": ["Marie Curie was a physicist.", "Marie Curie was born in Warsaw.",'
           ' "Marie Curie won two Nobel Prizes.", "Marie Curie was a physicist."]}\n```')
    assert ClaimExtraction().parse(raw, inputs).value == [
        "Marie Curie was a physicist.", "Marie Curie was born in Warsaw.", "Marie Curie won two Nobel Prizes."]
