"""strict_rewrite: grounded rewrite with checked citations."""

from hyperrag.llm.tasks.strict_rewrite import StrictRewrite

INPUTS = {"question": "Where was Marie Curie born?", "answer": "Kraków, in 1870.",
          "passages": [("p01", "Marie Curie was born in Warsaw in 1867.")],
          "unsupported_claims": ["Marie Curie was born in Kraków."]}


def test_rewrite():
    task = StrictRewrite()
    user = task.messages(INPUTS)[1]["content"]
    assert "Unsupported claims:" in user and "Draft answer:" in user
    parsed = task.parse("{'answer': 'Warsaw, in 1867.', 'supporting_ids': ['P1', 'P2']}", INPUTS)
    assert parsed.value == {"answer": "Warsaw, in 1867.", "supporting": ["p01"]} and parsed.dropped_ids == 1
