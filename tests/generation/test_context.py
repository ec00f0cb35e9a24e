"""A method's own context: packing within a token budget, and answering from it with provenance."""

import json
import re

from hyperrag.generation.context import ContextItem, answer_from_context, take_within
from tests.hierarchy.fake_llm import fake_llm, prompt_of


def test_take_within_stops_at_the_first_item_that_does_not_fit():
    counter = len  # one token per character
    assert take_within(["aaa", "bb", "c"], 5, counter) == 2
    assert take_within(["aaaaaa", "b"], 5, counter) == 0  # a shorter item further down is not taken instead
    assert take_within([], 5, counter) == 0 and take_within(["a", "b"], 10, counter) == 2


def test_answer_cites_passage_rows_by_their_passage_id(tmp_path):
    rows = [ContextItem("report:3", "Report 3: about rivers"), ContextItem("passage:p07", "Source: Le Havre ...", "p07"),
            ContextItem("entity:2", "Entity: seine")]

    def respond(body):  # TEST DOUBLE reply: cite the report and the passage row, by the IDs the prompt showed
        shown = re.findall(r'<passage id="(P\d+)">\n(\w+)', prompt_of(body))
        cited = [pid for pid, kind in shown if kind in ("Report", "Source")]
        return json.dumps({"answer": "Le Havre", "supporting_ids": cited})

    with fake_llm(respond, tmp_path) as (llm, server):
        out = answer_from_context(llm, ["Where does the Seine reach the sea?"], [rows])
    assert out == [{"answer": "Le Havre", "answer_ok": True, "supporting_ids": ["p07"],
                    "supporting_rows": ["report:3", "passage:p07"]}]
    assert "Entity: seine" in prompt_of(server.requests[0])


def test_a_failed_call_is_an_empty_answer(tmp_path):
    with fake_llm(lambda body: "not json", tmp_path) as (llm, _):
        out = answer_from_context(llm, ["q?"], [[ContextItem("passage:a", "text", "a")]])
    assert out[0]["answer"] == "" and not out[0]["answer_ok"] and out[0]["answer_error"]
