"""causal_gate (Fig 9): yes/no in either direction, with the direction; tolerant of booleans and case."""

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.tasks.causal_gate import CausalGate

INPUTS = {"a_text": "Flooding in Warsaw in 1997.", "b_text": "Heavy rainfall in the upper Vistula basin."}


@pytest.mark.parametrize("raw,expected", [
    ('{"answer": "yes", "direction": "B->A"}', {"gate": True, "direction": "B->A"}),
    ('{"answer": "No.", "direction": "none"}', {"gate": False, "direction": "none"}),
    ('{"answer": true, "direction": "a -> b"}', {"gate": True, "direction": "A->B"}),
    ('{"answer": "yes", "direction": "none"}', {"gate": True, "direction": "both"}),
    ('{"answer": "no", "direction": "A->B"}', {"gate": False, "direction": "none"}),
])
def test_gate_decisions(raw, expected):
    assert CausalGate().parse(raw, INPUTS).value == expected


def test_gate_rejects_maybe():
    with pytest.raises(OutputInvalid):
        CausalGate().parse('{"answer": "maybe", "direction": "none"}', INPUTS)


def test_gate_prompt_asks_both_directions():
    system, user = (m["content"] for m in CausalGate().messages(INPUTS))
    assert '<node id="A">' in user and '<node id="B">' in user
    assert "the other way round" in system and "B->A" in user
