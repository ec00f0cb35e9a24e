"""Context recall (passages / sentences) and causal retrieval coverage on hand-made cases."""

import pytest

from hyperrag.eval.context import causal_coverage, context_recall


def test_context_recall_passages():
    assert context_recall(["a", "b", "c"], ["a", "d"]) == 0.5
    assert context_recall(["a", "d"], ["a", "d", "a"]) == 1.0  # duplicates in gold count once
    assert context_recall(["a"], []) is None


def test_context_recall_sentences_by_passage_id_or_text():
    gold = [{"id": "p1#s0", "passage_id": "p1", "text": "Warsaw is on the Vistula."},
            {"id": "p2#s3", "passage_id": "p2", "text": "The Vistula flows into the Baltic Sea."},
            {"id": "p3#s1", "passage_id": "p3", "text": "Gdańsk lies at its mouth."},
            "A sentence found only by its text."]
    # p1 retrieved; p2's sentence found in the context text; p3 missing; the plain-text sentence present
    text = "Intro. The Vistula flows into the Baltic Sea. And: a sentence found only by its text!"
    assert context_recall(["p1", "p9"], ["p1", "p2", "p3"], gold, text) == pytest.approx(3 / 4)
    # without context text only passage ids count
    assert context_recall(["p1", "p9"], ["p1", "p2", "p3"], gold) == pytest.approx(1 / 4)
    # gold sentences, when given, are the unit (not the gold passages): 1 of 2 sentences covered
    assert context_recall(["p2"], ["p1"], gold[:2]) == 0.5


def test_causal_coverage_needs_both_ends():
    pairs = [["p1", "p2"], {"cause": "heavy rainfall", "effect": "p3"}, ("p1", "drought")]
    text = "After heavy rainfall the river flooded."
    # pair 1: both passages retrieved; pair 2: cause in text, effect retrieved; pair 3: "drought" missing
    assert causal_coverage(pairs, ["p1", "p2", "p3"], text) == pytest.approx(2 / 3)
    assert causal_coverage(pairs, ["p1"], text) == 0.0
    assert causal_coverage([], ["p1"]) is None
    with pytest.raises(ValueError):
        causal_coverage([["only one end"]], ["p1"])


def test_uniform_evaluator_caps_apply_to_evidence_and_passages_alike():
    """HugRAG F.4: one cap on the context's items and length for every method (recorded evidence or top passages)."""
    from hyperrag.eval.suite import EvalInputs, capped_context

    assert capped_context(["a b c", "d e", "f"], 2, None) == "a b c\nd e"
    assert capped_context(["one two three four five six"], None, 4) == "one two three"  # 4 tokens = 3 words
    evidence = {"details": {"evidence": ["N1: alpha beta", "passage one two three four five", "extra"]},
                "ranked_ids": []}
    capped = EvalInputs(rows=[evidence], context_max_items=2, context_max_tokens=8)
    assert capped.context_text(evidence) == "N1: alpha beta\npassage one two"  # 8 tokens = 6 words
    assert EvalInputs(rows=[evidence]).context_text(evidence).endswith("extra")  # no cap: all of it


def test_equal_reader_inputs_under_the_same_caps():
    """Evaluator caps applied per method: each method's context keeps its own top ``context_top_n`` passages under
    the same cap; HugRAG's S* rows (recorded before its passages) fill the remaining items and never push its
    passages out (the earlier rows-first cap of 8 dropped all of them)."""
    from hyperrag.data.types import Corpus, Passage
    from hyperrag.eval.suite import EvalInputs

    corpus = Corpus([Passage(f"p{i}", f"T{i}", f"passage {i} text") for i in range(6)])
    dense = {"ranked_ids": ["p0", "p1", "p2", "p3", "p4"]}
    rows = [f"N{i}: row {i}" for i in range(12)]
    hugrag = {"ranked_ids": ["p3", "p4", "p5"],
              "details": {"evidence": rows + ["T3\npassage 3 text", "T4\npassage 4 text", "T5\npassage 5 text"],
                          "evidence_kinds": ["row"] * 12 + ["passage"] * 3}}
    caps = EvalInputs(rows=[dense, hugrag], corpus=corpus, context_top_n=3, context_max_items=8,
                      context_max_tokens=1024)

    def passages_in(text):
        return sorted(line for line in text.split("\n") if line.startswith("passage"))

    dense_ctx, hug_ctx = caps.context_text(dense), caps.context_text(hugrag)
    assert passages_in(dense_ctx) == ["passage 0 text", "passage 1 text", "passage 2 text"]
    assert passages_in(hug_ctx) == ["passage 3 text", "passage 4 text", "passage 5 text"]  # its own 3, all kept
    assert [line for line in hug_ctx.split("\n") if line.startswith("N")] == rows[:5]  # 3 passages + 5 rows = 8
    # S* only (the paper preset: answer_passages 0): its rows, up to the item cap
    s_star = {"details": {"evidence": rows, "evidence_kinds": ["row"] * 12}}
    assert caps.context_text(s_star).split("\n") == rows[:8]
    # the token cap cuts the tail — the rows — first
    tight = EvalInputs(rows=[hugrag], corpus=corpus, context_top_n=3, context_max_items=8, context_max_tokens=20)
    assert passages_in(tight.context_text(hugrag)) == ["passage 3 text", "passage 4 text", "passage 5 text"]


def test_eval_caps_are_a_config_file():
    """The caps of HugRAG's tables live in hydra_configs/eval_caps/hugrag_table.yaml, not in a comment."""
    from hyperrag.config.compose import compose_config

    cfg = compose_config("evaluate", ["predictions=x", "eval_caps=hugrag_table"])
    assert (cfg.context_top_n, cfg.context_max_items, cfg.context_max_tokens) == (3, 8, 1024)
    plain = compose_config("evaluate", ["predictions=x"])
    assert plain.context_top_n is None and plain.context_max_items is None
    assert compose_config("evaluate", ["predictions=x", "eval_caps=hugrag_table", "context_top_n=5"]).context_top_n == 5
