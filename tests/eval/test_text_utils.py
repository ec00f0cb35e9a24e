"""Sentence splitting, content tokens and abstentions on hand-made text."""

from hyperrag.eval.text import contains_text, content_tokens, is_abstention
from hyperrag.utils.sentences import sentence_spans, split_sentences


def test_split_sentences_keeps_abbreviations_and_initials():
    text = "Dr. Smith moved to Paris in 1901. J. R. R. Tolkien wrote books!  Was it the U.S. Army? Yes."
    assert split_sentences(text) == ["Dr. Smith moved to Paris in 1901.", "J. R. R. Tolkien wrote books!",
                                     "Was it the U.S. Army?", "Yes."]
    assert split_sentences("  ") == [] and split_sentences("no final stop") == ["no final stop"]
    spans = sentence_spans("It rained.  As a result, the U.S. river rose in Jan. 1990. Then it fell.")
    assert spans == [(0, "It rained."), (12, "As a result, the U.S. river rose in Jan. 1990."), (59, "Then it fell.")]


def test_content_tokens_and_abstentions():
    assert content_tokens("The Vistula flows into the Baltic Sea.") == ["vistula", "flows", "baltic", "sea"]
    assert is_abstention("") and is_abstention(None) and is_abstention("Unknown.") and is_abstention("I don't know")
    assert not is_abstention("Warsaw")


def test_free_text_abstentions_of_an_explanatory_reader():
    """The "cannot answer" forms an explanatory reader writes are abstentions (the oracle's own among them); an
    answer whose first sentence answers is not, whatever it adds."""
    for text in ("The passages do not give the answer.", "The evidence does not give the answer.",
                 "The provided context does not mention when the bridge opened.",
                 "The passages don't say who directed it.", "There is not enough information to answer.",
                 "I cannot determine the answer from the passages.", "It cannot be determined from the evidence.",
                 "Not enough information is given. The first passage is about Iowa.", "It is not stated."):
        assert is_abstention(text), text
    for text in ("The answer is Dodge County. The passages do not say when it was founded.",
                 "Dodge County borders Jefferson County.", "No one knows the cause; the passages say it rained.",
                 "Information theory was founded by Claude Shannon."):
        assert not is_abstention(text), text
    assert contains_text("marie curie was born in warsaw", "Warsaw!") and not contains_text("warsawa", "Warsaw")
