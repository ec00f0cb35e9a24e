"""causal_gate (Fig 9): the paper's text by default (yes/no, undirected); the extended form (prompts=extended) adds
the direction; tolerant of booleans and case."""

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
    assert CausalGate("extended").parse(raw, INPUTS).value == expected


def test_gate_rejects_maybe():
    with pytest.raises(OutputInvalid):
        CausalGate("extended").parse('{"answer": "maybe", "direction": "none"}', INPUTS)
    with pytest.raises(OutputInvalid):
        CausalGate().parse("maybe", INPUTS)


FIG9_LINES = (  # HugRAG's Fig 9, verbatim
    ("-Goal-\nGiven two text snippets A and B, decide whether there is any plausible causal relationship between "
     "them (either direction) under some reasonable context."),
    ("-Steps-\n1. Read A and B, and consider whether one could plausibly influence the other (directly or "
     "indirectly).\n2. Require a plausible mechanism; ignore mere correlation or co-occurrence.\n"
     '3. If uncertain or only associative, choose "no".'),
    "-Output-\nReturn exactly one token: 'yes' or 'no'. No extra text.",
    "#####\n-Real Data-\nA: ", "#####\nOutput:")


def test_paper_json_prompt_is_fig9_in_our_frame():
    """``paper_json``: Fig 9's text in ``<node>`` blocks under our JSON system message (the default ``paper`` form is
    the figure as printed: tests/llm/tasks/test_hugrag_paper_prompts.py)."""
    task = CausalGate("paper_json")
    system, user = (m["content"] for m in task.messages(INPUTS))
    for text in FIG9_LINES:
        assert text in user, text
    assert "Flooding in Warsaw" in user and "upper Vistula" in user and "A->B" not in system + user
    assert task.key == "causal_gate/paper@v2" and '{"answer": "yes"}' in system
    # the one token, as JSON or bare; a paper-form gate is undirected
    assert task.parse('{"answer": "Yes"}', INPUTS).value == {"gate": True, "direction": "both"}
    assert task.parse("no", INPUTS).value == {"gate": False, "direction": "none"}


def test_gate_prompt_asks_both_directions():
    task = CausalGate("extended")
    assert task.key == "causal_gate@v2"
    system, user = (m["content"] for m in task.messages(INPUTS))
    assert "-Goal-" not in user
    assert '<node id="A">' in user and '<node id="B">' in user
    assert "the other way round" in system and "B->A" in user


def test_unknown_prompt_form():
    with pytest.raises(ValueError):
        CausalGate("verbatim")  # type: ignore[arg-type]
