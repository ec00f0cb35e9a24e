"""GPT-Acc: the answer_judge task and the judge_acc metric (a scripted test double plays the judge)."""

import json

from hyperrag.eval.judge import llm_judge_accuracy
from hyperrag.eval.suite import EvalInputs, evaluate_rows
from hyperrag.llm.tasks import get_task
from hyperrag.llm.types import TaskResult

INPUTS = {"question": "Who was the 44th US president?", "references": ["Barack Obama", "Obama"],
          "response": "It was Barack H. Obama."}


def test_answer_judge_prompt_and_parse():
    task = get_task("answer_judge")
    user = task.messages(INPUTS)[1]["content"]
    assert "- Barack Obama" in user and "It was Barack H. Obama." in user
    assert task.parse('{"correct": true, "reason": "same person"}', INPUTS).value is True


class ScriptedJudge:
    """A scripted test double (not a model): correct iff the response contains the first reference's last word."""

    available = True

    def __init__(self):
        self.calls = 0

    def complete_structured_batch(self, task, inputs_list, progress=False):
        t = get_task(task)
        out = []
        for x in inputs_list:
            self.calls += 1
            ok = x["references"][0].split()[-1].lower() in x["response"].lower()
            parsed = t.parse(json.dumps({"correct": ok, "reason": "scripted"}), x)
            out.append(TaskResult(t.name, True, parsed.output, parsed.value))
        return out


def test_judge_accuracy_skips_abstentions_and_rows_without_gold():
    judge = ScriptedJudge()
    acc = llm_judge_accuracy(judge, ["q1", "q2", "q3", "q4"], ["Barack H. Obama", "unknown", "Bush", "x"],
                             [["Barack Obama"], ["Paris"], ["Barack Obama"], []])
    assert acc == [1.0, 0.0, 0.0, None] and judge.calls == 2  # the abstention is wrong without asking
    rows = [{"id": "a", "question": "q1", "answer": "Barack H. Obama", "answers": ["Barack Obama"],
             "ranked_ids": [], "gold_ids": []},
            {"id": "b", "question": "q2", "answer": "Paris, France", "answers": ["Paris"], "ranked_ids": [],
             "gold_ids": []}]
    agg, per, _ = evaluate_rows(EvalInputs(rows, llm=judge), ["qa", "judge_acc"])
    assert agg["judge_acc"] == 100.0 and agg["match_acc"] == 50.0 and agg["em"] == 0.0  # "Barack H. Obama"
    assert per[0]["judge_acc"] == 1.0
