"""causal_entailment (CDF-RAG §2.4's 𝕀(C → E ⊨ ŷ)): one verdict per retrieved pair, judged on the answer."""

from hyperrag.llm.tasks.causal_entailment import CausalEntailment

INPUTS = {"question": "Why did the reservoir silt?", "answer": "Logging eroded the soil, which silted the reservoir.",
          "pairs": [("logging", "soil erosion"), "Soil erosion causes silting.", ("silting", "logging")]}


def test_verdicts_in_pair_order_and_missing_ones_are_not_addressed():
    raw = ('{"judgements": [{"id": "C2", "verdict": "entailed"}, {"id": "C1", "verdict": "maintained"}, '
           '{"id": "C9", "verdict": "maintained"}], "reason": ""}')
    parsed = CausalEntailment().parse(raw, INPUTS)
    assert parsed.value == ["maintained", "maintained", "not_addressed"]
    assert parsed.dropped_ids == 2  # C9 was never shown, C3 was left out


def test_prompt_shows_answer_and_relations():
    system, user = (m["content"] for m in CausalEntailment().messages(INPUTS))
    assert "read only the answer" in system
    assert "Logging eroded the soil" in user and "logging → soil erosion" in user
    assert '<fact id="C2">' in user and "Soil erosion causes silting." in user
