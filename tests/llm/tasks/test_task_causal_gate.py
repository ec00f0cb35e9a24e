"""causal_gate: yes/no with reason; tolerant of booleans and case."""

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.tasks.causal_gate import CausalGate

INPUTS = {"source": "Heavy rainfall in the upper Vistula basin.", "target": "Flooding in Warsaw in 1997."}


@pytest.mark.parametrize("raw,expected", [
    ('{"answer": "yes", "reason": "Rain upstream raises the river at Warsaw."}', True),
    ('{"answer": "No.", "reason": "Only topically related."}', False),
    ('{"answer": true, "reason": "causes"}', True),
])
def test_gate_decisions(raw, expected):
    assert CausalGate().parse(raw, INPUTS).value is expected


def test_gate_rejects_maybe():
    with pytest.raises(OutputInvalid):
        CausalGate().parse('{"answer": "maybe", "reason": "unclear"}', INPUTS)


def test_gate_prompt_blocks():
    user = CausalGate().messages(INPUTS)[1]["content"]
    assert '<node id="SOURCE">' in user and '<node id="TARGET">' in user
