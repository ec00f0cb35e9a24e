"""HugRAG's prompt texts (``prompts: paper``, the default) are the paper's Figs 5, 6, 7 and 9 character for character
(as printed, with the template's ``{{ }}`` escapes), checked against the paper's text when it is present beside the
repository (``../shared/papers``); and the message ``prompts: paper`` sends *is* the figure with its slots filled:
one user message, no system message, no data blocks, no constrained decoding."""

from pathlib import Path

import pytest

from hyperrag.llm.errors import OutputInvalid
from hyperrag.llm.session import Sampling, prepare
from hyperrag.llm.tasks.causal_gate import FIG9, CausalGate
from hyperrag.llm.tasks.causal_path_selection import FIG5, FIG6, CausalPathSelection
from hyperrag.llm.tasks.subgraph_answer import FIG7, AnswerFromSubgraph

REPO = Path(__file__).resolve().parents[3]
PAPER = next((p for p in (REPO.parent / "shared" / "papers" / "000_bc0babe69dc2e528.txt",
                          REPO.parent.parent / "shared" / "papers" / "000_bc0babe69dc2e528.txt") if p.exists()),
             REPO.parent / "shared" / "papers" / "000_bc0babe69dc2e528.txt")


def printed(template: str, **slots: str) -> str:
    """The figure as printed with its slots filled by hand (no ``str.format``): what the model must receive."""
    text = template.replace("{{", "{").replace("}}", "}")
    for name, value in slots.items():
        text = text.replace("{" + name + "}", value)
    return text


def sent(task, inputs):
    """The messages and the structured-output payload a json-grammar backend would send for ``task``."""
    p = prepare(task, inputs, model="m", mode="json_object_schema", sampling=Sampling())
    return p.messages, p.structured


@pytest.mark.skipif(not PAPER.exists(), reason="the HugRAG paper's text is not beside the repository")
@pytest.mark.parametrize("figure, template", [("5", FIG5), ("6", FIG6), ("7", FIG7), ("9", FIG9)])
def test_templates_are_the_papers_text(figure, template):
    text = PAPER.read_text(encoding="utf-8")
    assert template in text, f"Fig {figure} differs from the paper's text"
    assert f"Figure {figure}." in text


def test_fig9_message_is_the_figure_and_the_reply_a_bare_token():
    a, b = "Heavy rainfall in the basin.", "Flooding of the river town."
    messages, structured = sent(CausalGate("paper"), {"a_text": a, "b_text": b})
    assert messages == [{"role": "user", "content": printed(FIG9, a_text=a, b_text=b)}]
    assert structured == {}  # no grammar: Fig 9 asks for one bare token
    if PAPER.exists():
        assert messages[0]["content"].replace(f"A: {a}\nB: {b}", "A: {a_text}\nB: {b_text}") in PAPER.read_text()
    task = CausalGate("paper")
    assert task.parse("yes", {}).value == {"gate": True, "direction": "both"}
    assert task.parse(" 'No'.\n", {}).value == {"gate": False, "direction": "none"}
    for bad in ('{"answer": "yes"}', "yes, because rain floods towns", ""):
        with pytest.raises(OutputInvalid):
            task.parse(bad, {})
    # the JSON frame stays a named reading
    messages, structured = sent(CausalGate("paper_json"), {"a_text": a, "b_text": b})
    assert messages[0]["role"] == "system" and "<node" in messages[1]["content"] and structured
    assert CausalGate("paper_json").parse('{"answer": "yes"}', {}).value["gate"] is True


@pytest.mark.parametrize("variant, template", [("spurious", FIG5), ("standard", FIG6)])
def test_fig5_fig6_messages_are_the_figures(variant, template):
    inputs = {"query": "Why did the river flood?", "max_selected": 4, "max_spurious": 2, "max_answer_words": 12,
              "candidates": [{"id": 0, "text": "Heavy rainfall in the basin", "kind": "node"},
                             {"id": 1, "text": "rain causes flood", "kind": "edge"}]}
    messages, structured = sent(CausalPathSelection(variant, prompts="paper"), inputs)
    table = "N1 | Heavy rainfall in the basin\nE1 | rain causes flood"
    want = printed(template, query=inputs["query"], context_table=table, max_precise_items="4",
                   max_ct_precise_items="2", max_answer_words="12")
    assert messages == [{"role": "user", "content": want}] and structured == {}
    assert "<data" not in want and "<item" not in want
    value = CausalPathSelection(variant, prompts="paper").parse(
        'Here it is:\n```json\n{"precise": ["E1", "N1"], "ct_precise": [], "p_answer": "rain"}\n```', inputs).value
    assert value["kept"] == [1, 0] and value["draft"] == "rain"
    messages, structured = sent(CausalPathSelection(variant, prompts="paper_json"), inputs)
    assert messages[0]["role"] == "system" and "<data>" in messages[1]["content"] and structured


@pytest.mark.parametrize("style", ["short", "explanatory"])
def test_fig7_message_is_the_figure_and_the_reply_free_text(style):
    inputs = {"question": "Why did the river flood?", "draft_answer": "rain",
              "evidence": ["N1: Heavy rainfall in the basin", "E1: rain causes flood"]}
    task = AnswerFromSubgraph(style, prompts="paper")
    messages, structured = sent(task, inputs)
    want = printed(FIG7, report_context="N1: Heavy rainfall in the basin\nE1: rain causes flood",
                   draft_answer="rain", query=inputs["question"])
    assert messages == [{"role": "user", "content": want}] and structured == {}
    value = task.parse("Heavy rainfall in the basin flooded the river.\n", inputs).value
    assert value["answer"] == "Heavy rainfall in the basin flooded the river."
    assert value.get("short_answer", value["answer"]) == value["answer"]  # Fig 7 asks for no bare answer
    with pytest.raises(OutputInvalid):
        task.parse("  ", inputs)
    messages, _ = sent(AnswerFromSubgraph(style, prompts="paper_json"), inputs)
    assert messages[0]["role"] == "system" and "<item" in messages[1]["content"]


def test_an_unreadable_printed_reply_is_asked_again_without_json(tmp_path):
    """A retry after an unreadable Fig 9 reply asks for the figure's own format, not for JSON (a retry turn is ours)."""
    from tests.hierarchy.fake_llm import fake_llm

    replies = iter(["-Yes", "yes"])
    with fake_llm(lambda body: next(replies), tmp_path, max_invalid_retries=1) as (llm, server):
        res = llm.complete_structured(CausalGate("paper"), {"a_text": "rain", "b_text": "flood"})
    assert res.ok and res.value["gate"] and res.parse_attempts == 2
    retry = server.requests[-1]["messages"][-1]["content"]
    assert "JSON" not in retry and "format the instructions ask for" in retry
    assert "response_format" not in server.requests[-1]


def test_the_paper_form_rule_lives_in_the_task_base_class():
    """One rule for every task (Task.messages / Task.structured): ``prompts == "paper"`` sends the user turn alone
    and no grammar; any other form (every task's default, ``extended``) a system message first and the schema."""
    from pydantic import BaseModel

    from hyperrag.llm.tasks.base import Task

    class Echo(Task):
        name = "echo"

        class Output(BaseModel):
            text: str

        def user(self, inputs):
            return f"say {inputs['x']}"

    plain = Echo()
    assert plain.prompts == "extended" and plain.structured
    assert [m["role"] for m in plain.messages({"x": 1})] == ["system", "user"]
    printed_form = Echo()
    printed_form.prompts = "paper"
    assert not printed_form.structured
    assert printed_form.messages({"x": 1}) == [{"role": "user", "content": "say 1"}]
    # the three HugRAG tasks carry no rule of their own
    for cls in (CausalGate, CausalPathSelection, AnswerFromSubgraph):
        assert "messages" not in vars(cls) and "structured" not in vars(cls)
