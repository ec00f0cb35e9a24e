import pytest

from hyperrag.eval.qa import answer_in_response, exact_match, normalize_answer, qa_metrics, token_f1


def test_normalisation():
    assert normalize_answer("The  Baltic Sea!") == "baltic sea"
    assert normalize_answer("an Apple, a day") == "apple day"


def test_exact_match_any_gold():
    assert exact_match("the Baltic sea", ["Baltic Sea", "the Baltic"]) == 1.0
    assert exact_match("Baltic", ["Baltic Sea"]) == 0.0


def test_token_f1_known_value():
    # pred {baltic, sea, coast} vs gold {baltic, sea}: P = 2/3, R = 1, F1 = 0.8
    assert token_f1("Baltic Sea coast", ["Baltic Sea"]) == pytest.approx(0.8)
    assert token_f1("Paris", ["Le Havre", "Paris"]) == 1.0
    assert token_f1("nothing", ["Paris"]) == 0.0


def test_qa_metrics_and_jsr():
    m = qa_metrics(["Paris", "Rouen", "x"], [["Paris"], ["Le Havre"], []], full_chain=[1.0, 1.0, 0.0])
    assert m["em"] == 50.0 and m["f1"] == 50.0 and m["jsr"] == 50.0
    m = qa_metrics(["Paris"], [["Paris"]], full_chain=[0.0])
    assert m["jsr"] == 0.0


def test_jsr_counts_a_response_that_contains_the_answer():
    """CatRAG's JSR: full chain retrieved and the response contains the gold answer (EM is unchanged)."""
    preds = ["It reaches the sea at Le Havre, in Normandy.", "The Baltic.", "Le Havre", "Havre de Grace"]
    golds = [["Le Havre"], ["Baltic Sea", "the Baltic"], ["Le Havre"], ["Le Havre"]]
    m = qa_metrics(preds, golds, full_chain=[1.0, 1.0, 0.0, 1.0])
    assert m["em"] == 50.0  # "The Baltic." and "Le Havre" only
    assert m["jsr"] == 50.0  # q1 (contained) and q2; q3 lacks the chain; "Havre de Grace" is not "Le Havre"
    assert answer_in_response("It reaches the sea at Le Havre.", ["le havre"]) == 1.0
    assert answer_in_response("Havre", ["Le Havre"]) == 0.0


def test_jsr_of_a_multiple_choice_query_needs_the_correct_option():
    options = [["SUPPORTED", "NOT_SUPPORTED"]] * 2
    m = qa_metrics(["not supported", "NOT_SUPPORTED"], [["SUPPORTED"], ["NOT_SUPPORTED"]], full_chain=[1.0, 1.0],
                   options=options, answer_indices=[0, 1])
    assert m["jsr"] == 50.0  # "not supported" contains the word "supported" but names the wrong option


def test_match_acc_is_whole_word_containment():
    assert answer_in_response("It was built in Paris, France.", ["paris"]) == 1.0
    assert answer_in_response("Parisian", ["Paris"]) == 0.0 and answer_in_response("anything", [""]) == 0.0
    m = qa_metrics(["The answer is Le Havre.", "Rouen"], [["Le Havre"], ["Paris", "Rouen"]])
    assert m["match_acc"] == 100.0 and m["em"] == 50.0


def test_holisqa_f1_scores_the_full_answer():
    """HolisQA's gold answers are 2-4 sentences (HugRAG §5.1 / F.2): F1 scores the whole response there, the short
    answer elsewhere."""
    from hyperrag.eval.qa import answer_scores, f1_answer_of, qa_metrics

    assert f1_answer_of("holisqa_medicine") == "full" and f1_answer_of("holisqa") == "full"
    assert f1_answer_of("musique") == "short"
    gold = ["Aspirin inhibits cyclooxygenase, which lowers prostaglandin synthesis and so reduces inflammation."]
    response = "Aspirin inhibits cyclooxygenase; lower prostaglandin synthesis reduces inflammation."
    short = "cyclooxygenase"
    as_short = qa_metrics([response], [gold], short_answers=[short])["f1"]
    as_full = qa_metrics([response], [gold], short_answers=[short], f1_answer="full")["f1"]
    assert as_full > 50 > as_short
    row = {"answers": gold, "answer": response, "short_answer": short, "ranked_ids": [], "gold_ids": []}
    assert answer_scores(row, 3, "full")["f1"] == as_full / 100
    assert answer_scores(row, 3)["f1"] == as_short / 100
