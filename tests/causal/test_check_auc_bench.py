"""benchmarks/bench_causal_check_auc.py (issue 49): S_causal as the generator scores it, the LLM's
``causal_entailment`` verdicts in place of the lexical ones, and the count of which condition zeroes S_causal."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from hyperrag.llm.types import TaskResult
from tests.conftest import load_benchmark

# (cause, effect, provenance passage, statement)
PAIRS = [("heavy rain", "the river flooded", "p1", ""), ("the bus broke down", "she was late", "p2", "")]


def load():
    return load_benchmark("bench_causal_check_auc")


class ScriptedLLM:
    """Answers ``causal_entailment`` with the verdicts of ``reply(inputs)`` (None: a failed call); records the calls."""

    def __init__(self, reply):
        self.reply, self.calls = reply, []

    def complete_structured_batch(self, task, inputs_list, *, progress=False):
        assert task == "causal_entailment"
        self.calls += list(inputs_list)
        out = []
        for inputs in inputs_list:
            v = self.reply(inputs)
            out.append(TaskResult(task=task, ok=v is not None, value=v, error_kind=None if v else "invalid"))
        return out


def test_scope_and_lexical_score_as_the_generator_computes_them():
    b = load()
    # cites p2's passage and states p2's pair: scope {1}, maintained → 1.0; under "all" p1 is not addressed → 0.5
    answer = "The bus broke down, so she was late."
    assert b.check_scope(PAIRS, answer, ["p2"], "answer", 0.5) == [1]
    assert b.s_causal(PAIRS, answer, ["p2"], "answer", 0.5) == 1.0
    assert b.s_causal(PAIRS, answer, ["p2"], "all", 0.5) == 0.5
    # cites nothing with a pair and states none: an empty scope scores 0
    assert b.check_scope(PAIRS, "Because it was sunny.", ["p9"], "answer", 0.5) == []
    assert b.s_causal(PAIRS, "Because it was sunny.", ["p9"], "answer", 0.5) == 0.0
    # cites p1 but says nothing of it: scope {0}, not addressed → 0
    assert b.s_causal(PAIRS, "Because it was sunny.", ["p1"], "answer", 0.5) == 0.0


def test_llm_verdicts_ask_per_non_empty_scope_and_report_failures():
    b = load()
    llm = ScriptedLLM(lambda inputs: None if "fail" in inputs["answer"] else ["maintained"] * len(inputs["pairs"]))
    jobs = [("Why late?", "She was late because the bus broke down.", [PAIRS[1]]),
            ("Why late?", "no pairs in scope", []),
            ("Why late?", "this call will fail", [PAIRS[0], PAIRS[1]])]
    out = b.llm_verdicts(llm, jobs)
    assert [len(c["pairs"]) for c in llm.calls] == [1, 2]  # the empty scope is not asked
    assert llm.calls[0]["pairs"] == ["the bus broke down causes she was late."]  # pair statements, as the generator
    assert out[0] == (["maintained"], "llm") and out[1] == (None, "empty")
    assert out[2][0] is None and out[2][1].startswith("failed")


def test_zero_reasons_tell_an_empty_scope_from_unmaintained_pairs():
    b = load()
    rows = [{"answer": "Because it was sunny.", "pairs": PAIRS, "positions": [], "verdicts": [], "score": 0.0},
            {"answer": "The rain was heavy.", "pairs": PAIRS, "positions": [0], "verdicts": ["not_addressed"],
             "score": 0.0},
            {"answer": "Heavy rain flooded the river.", "pairs": PAIRS, "positions": [0], "verdicts": ["maintained"],
             "score": 1.0}]
    why = b.zero_reasons(rows, 0.5)
    assert why["answers"] == 3 and why["zero"] == 2
    assert why["empty_scope"] == 1 and why["scope_none_maintained"] == 1
    # scoped pairs: "heavy rain" covered in rows 2 and 3; "the river flooded" (river, flooded) only in row 3
    assert why["scoped_pairs"] == 2 and why["scoped_pairs_cause_covered"] == 2
    assert why["scoped_pairs_effect_covered"] == 1 and why["scoped_pairs_both_covered"] == 1
    assert why["verdicts"] == {"maintained": 1, "not_addressed": 1}


def test_max_checked_keeps_the_first_questions_and_the_same_corruptions():
    b = load()
    assert b.first_checked([1, 2, 3], None) == [1, 2, 3] and b.first_checked([1, 2, 3], 2) == [1, 2]
    with pytest.raises(ValueError):
        b.first_checked([1, 2, 3], 0)

    class Q:
        def __init__(self, k):
            self.options, self.answer_index = [f"o{k}{j}" for j in range(4)], k % 4

    ds = SimpleNamespace(queries=[Q(k) for k in range(10)])
    full = b.answers(ds, "multiple_choice", list(range(10)), seed=0)
    assert b.answers(ds, "multiple_choice", list(range(4)), seed=0) == full[:4]


def test_an_unknown_scope_is_refused(monkeypatch, capsys):
    b = load()
    monkeypatch.setattr(sys, "argv", ["bench", "--data", "x", "--scopes", "answer,some"])
    with pytest.raises(SystemExit) as e:
        b.main()
    assert e.value.code == 2 and "--scopes" in capsys.readouterr().err


@pytest.mark.llm
@pytest.mark.slow
def test_embedded_smollm2_gives_one_verdict_per_pair(tmp_path, monkeypatch):
    """The embedded SmolLM2 answers ``causal_entailment`` for the bench (plumbing: any verdict, one per pair)."""
    b = load()
    monkeypatch.setenv("HYPERRAG_CACHE", str(tmp_path))
    llm = b.bench_llm("local", None, ["llm.show_usage=false"])
    try:
        (verdicts, source), = b.llm_verdicts(llm, [("Why was she late?", "The bus broke down, so she was late.",
                                                    [PAIRS[1]])])
    finally:
        llm.stop()
    assert source == "llm" and len(verdicts) == 1
    assert verdicts[0] in ("maintained", "contradicted", "not_addressed")
