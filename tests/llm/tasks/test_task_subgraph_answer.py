"""HugRAG's answer from S* (Fig 7): the figure's text verbatim by default; the extended form (every instruction of
the figure in our words, plus our additions); both answer styles."""

import pytest

from hyperrag.llm.tasks.subgraph_answer import AnswerFromSubgraph

INPUTS = {"question": "Why did commute delays surge after the blackout?",
          "evidence": [("row:0", "N1: blackout knocked out signal controllers"),
                       ("passage:3", "Intersections went flashing and gridlock spread.")],
          "draft_answer": "signals failed"}

FIG7 = ("helpful assistant who answers the user's question",          # role
        "on the evidence context given and on nothing else",           # goal; A.2: only the provided evidence
        "A draft answer may be given", "use the draft only where the evidence supports it",
        "concise, direct and neutral")                                 # answer format


@pytest.mark.parametrize("style", ["short", "explanatory"])
def test_every_fig7_instruction_in_both_styles(style):
    task = AnswerFromSubgraph(style, prompts="extended")
    system, user = (m["content"] for m in task.messages(INPUTS))
    for phrase in FIG7:
        assert phrase in system, phrase
    assert "signal controllers" in user and "signals failed" in user and "Why did commute" in user
    assert "Draft answer" not in AnswerFromSubgraph(style, "extended").messages({**INPUTS, "draft_answer": ""})[1]["content"]


def test_short_style_asks_for_the_bare_answer():
    task = AnswerFromSubgraph(prompts="extended")
    assert task.key == "subgraph_answer@v2" and "as many sentences" not in task.system(INPUTS)
    assert "the entity, date, number or short statement" in task.system(INPUTS)
    assert task.parse('{"answer": "signal failure"}', INPUTS).value == {"answer": "signal failure"}


def test_explanatory_style_answers_as_long_as_needed_with_the_short_answer():
    task = AnswerFromSubgraph("explanatory", "extended")
    system = task.system(INPUTS)
    assert task.key == "subgraph_answer/explanatory@v2" and task.max_tokens > AnswerFromSubgraph().max_tokens
    for phrase in ("as many sentences as the question needs", "short_answer", "not a sentence"):
        assert phrase in system, phrase
    assert '"short_answer"' in task.user(INPUTS)
    value = task.parse('{"answer": "The blackout cut power to signal controllers, so intersections went flashing '
                       'and gridlock spread.", "short_answer": "signal controllers failed"}', INPUTS).value
    assert value["short_answer"] == "signal controllers failed" and value["answer"].startswith("The blackout")
    with pytest.raises(ValueError):
        AnswerFromSubgraph("long")


FIG7_TEXT = (  # HugRAG's Fig 7, verbatim (the sections between the filled-in inputs)
    ("---Role---\nYou are a helpful assistant answering the user's question.\n\n---Goal---\nAnswer the question using "
     "the provided evidence context. A draft answer may be provided; use it only if it is supported by the evidence."
     "\n\n---Evidence Context---\n"),
    "\n\n---Draft Answer (optional)---\n", "\n\n---Question---\n",
    "\n\n---Answer Format---\nConcise, direct, and neutral.")


@pytest.mark.parametrize("style", ["short", "explanatory"])
def test_paper_json_prompt_is_fig7_in_our_frame(style):
    task = AnswerFromSubgraph(style, prompts="paper_json")
    system, user = (m["content"] for m in task.messages(INPUTS))
    for text in FIG7_TEXT:
        assert text in user, text
    assert "signal controllers" in user and "signals failed" in user and "Why did commute" in user
    # none of our additions: no abstention rule, no length rule
    assert "unknown" not in (system + user).lower() and "sentences" not in system + user
    assert ('"short_answer"' in system) == (style == "explanatory")
    assert task.key == ("subgraph_answer/paper@v2" if style == "short" else "subgraph_answer/explanatory/paper@v2")
    no_draft = task.messages({**INPUTS, "draft_answer": ""})[1]["content"]
    assert "---Draft Answer (optional)---\n\n\n---Question---" in no_draft
