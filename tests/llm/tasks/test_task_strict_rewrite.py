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


CAUSAL = {"question": "Why did the reservoir silt up?", "answer": "Logging eroded the soil.",
          "passages": [("p01", "Logging eroded the soil, which silted the reservoir.")],
          "keep": ["Logging causes soil erosion."], "missing": ["Soil erosion causes silting."],
          "contradicted": ["Silting causes logging."]}


def test_causal_fallback_keeps_verified_relations_and_asks_for_the_missing_ones():
    """The fallback prompt (§2.4) never tells the model to drop a relation of the evidence: it lists the ones the
    draft keeps as to be kept unchanged, the missing ones to be stated, the reversed ones to be corrected."""
    task = StrictRewrite(mode="causal")
    system, user = (m["content"] for m in task.messages(CAUSAL))
    assert "Keep every relation listed under \"Relations to keep\"" in system
    assert "do not drop, weaken or reverse" in system
    assert "Missing relations" in system and "Relations to correct" in system and "direction" in system
    assert "Add nothing the passages do not support" in system
    assert "remove" not in system.lower()  # nothing verified is to be removed
    assert "Relations to keep:\n<data>\nLogging causes soil erosion.\n</data>" in user
    assert "Missing relations:\n<data>\nSoil erosion causes silting.\n</data>" in user
    assert "Relations to correct:\n<data>\nSilting causes logging.\n</data>" in user
    assert "Unsupported claims" not in user
    assert task.key != StrictRewrite().key


def test_explanatory_style_asks_for_an_explanation_and_the_short_answer():
    for mode in ("claims", "causal"):
        task = StrictRewrite(style="explanatory", mode=mode)
        system, user = (m["content"] for m in task.messages({**CAUSAL, **INPUTS}))
        assert "explanation grounded in the passages" in system and "short_answer" in system
        assert '"short_answer"' in user
        parsed = task.parse('{"answer": "Born in Warsaw in 1867, as the passage says.", "short_answer": "Warsaw", '
                            '"supporting_ids": ["P1"]}', INPUTS)
        assert parsed.value == {"answer": "Born in Warsaw in 1867, as the passage says.", "short_answer": "Warsaw",
                                "supporting": ["p01"]}
    short = StrictRewrite(mode="causal")
    assert "not a sentence" in short.messages(CAUSAL)[0]["content"]
    assert '"short_answer"' not in short.messages(CAUSAL)[1]["content"]
