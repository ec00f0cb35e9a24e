import pytest

from hyperrag.eval.qa import answer_contained, exact_match, normalize_answer, qa_metrics, token_f1


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


def test_match_acc_is_whole_word_containment():
    assert answer_contained("It was built in Paris, France.", ["paris"]) == 1.0
    assert answer_contained("Parisian", ["Paris"]) == 0.0 and answer_contained("anything", [""]) == 0.0
    m = qa_metrics(["The answer is Le Havre.", "Rouen"], [["Le Havre"], ["Paris", "Rouen"]])
    assert m["match_acc"] == 100.0 and m["em"] == 50.0
