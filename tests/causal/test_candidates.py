from hyperrag.causal.candidates import (
    connective_candidates,
    extract_candidates,
    normalize_span,
    openie_candidates,
)
from hyperrag.utils.sentences import sentence_spans
from tests.causal.corpus import causal_dataset


def pairs(text: str) -> list[tuple[str, str, str, str]]:
    sents = [s for _, s in sentence_spans(text)]
    return [(c.cause, c.effect, c.connective, c.strength) for c in connective_candidates(sents, 0)]


def test_effect_follows_connectives():
    assert pairs("Heavy logging in the valley led to severe soil erosion.") == [
        ("Heavy logging in the valley", "severe soil erosion", "led to", "strong")]
    assert pairs("The storm resulted in a blackout, which lasted two days.") == [
        ("The storm", "a blackout", "resulted in", "strong")]


def test_cause_follows_connectives_both_positions():
    # "Y because X" and "Because X, Y" give the same direction X -> Y
    assert pairs("The match was cancelled because the pitch was flooded.") == [
        ("the pitch was flooded", "The match was cancelled", "because", "strong")]
    assert pairs("Due to the migration, the port city grew rapidly.") == [
        ("the migration", "the port city grew rapidly", "due to", "strong")]
    assert pairs("The bridge collapsed because of corrosion of its cables.")[0][:2] == (
        "corrosion of its cables", "The bridge collapsed")


def test_sentence_initial_adverbial_takes_previous_sentence_as_cause():
    got = pairs("Erosion silted the reservoir. As a result, the town lost its water supply.")
    assert got == [("Erosion silted the reservoir", "the town lost its water supply", "as a result", "strong")]
    assert pairs("As a result, the town lost its water supply.") == []  # no previous sentence


def test_weak_connectives_are_candidates_not_labels():
    got = pairs("After the railway opened, the timber trade expanded.")
    assert got == [("the railway opened", "the timber trade expanded", "after", "weak")]


def test_offsets_point_at_the_spans():
    sents = ["In 2016, he was awarded citizenship due to his close ties with the country."]
    (c,) = connective_candidates(sents, 3)
    assert c.sentence[c.cause_char:].startswith(c.cause) and c.sentence[c.effect_char:].startswith(c.effect)
    assert c.passage == 3 and c.sentence_index == 0


def test_junk_spans_are_dropped():
    assert pairs("It may have contributed to the loss.") == []  # "It may have": no content word
    assert pairs("Because of this.") == []  # no comma: no main clause


def test_sentence_split_keeps_abbreviations():
    sents = [s for _, s in sentence_spans("Dr. Smith visited St. Louis in 1900. He left after a year.")]
    assert sents == ["Dr. Smith visited St. Louis in 1900.", "He left after a year."]


def test_openie_causal_and_non_causal_relations():
    sents = ["The famine resulted in mass migration.", "Maren is a port city and was hit by a storm."]
    causal, other = openie_candidates(sents, [("famine", "resulted in", "mass migration"),
                                              ("Maren", "is a", "port city"),
                                              ("storm", "caused by", "low pressure"),  # not in any sentence
                                              ("Maren", "was hit by", "a storm")], passage=5)
    assert [(c.cause, c.effect, c.strength) for c in causal] == [("famine", "mass migration", "openie")]
    assert [(c.cause, c.effect) for c in other] == [("Maren", "port city")]


def test_passive_openie_relation_is_reoriented():
    causal, _ = openie_candidates(["The collapse was caused by corrosion."],
                                  [("collapse", "was caused by", "corrosion")], passage=0)
    assert [(c.cause, c.effect) for c in causal] == [("corrosion", "collapse")]


def test_extract_candidates_on_toy_corpus(tmp_path):
    from hyperrag.data import read_openie

    ds = causal_dataset(tmp_path)
    cands = extract_candidates(ds.corpus, read_openie(ds.openie_path, ds.corpus).triples)
    counts = cands.count()
    assert counts["strong"] == 10 and counts["weak"] == 2 and counts["openie"] >= 3 and counts["non_causal"] >= 2
    keys = {(c.passage, normalize_span(c.cause), normalize_span(c.effect)) for c in cands.pairs}
    assert len(keys) == len(cands.pairs)  # deduplicated per passage
    assert (4, "migration", "port city of maren grew rapidly") in keys


def test_normalize_span():
    assert normalize_span("The  Silting, of the reservoir!") == "silting of the reservoir"


def test_connective_offsets_and_adjacent_pairs():
    from hyperrag.causal.candidates import adjacent_pairs

    sents = ["Erosion silted the reservoir.", "As a result, the town lost its water."]
    (c,) = connective_candidates(sents, 0)
    assert c.sentence[c.connective_char : c.connective_end] == "As a result"
    plain = ["Maren is a port city.", "Its harbour handles timber.", "Since 1990 it grew."]
    (a,) = adjacent_pairs(plain, 2)  # the pair touching the "since" sentence is skipped
    assert (a.cause, a.effect, a.source) == ("Maren is a port city", "Its harbour handles timber", "adjacent")
    assert a.connective_char == a.connective_end == len(plain[0]) + 1  # the join point


def test_openie_relation_span_or_insertion_point():
    causal, other = openie_candidates(["The famine resulted in mass migration.", "Varden lies in the north."],
                                      [("famine", "resulted in", "mass migration"), ("Varden", "is located in", "north")],
                                      passage=0)
    assert causal[0].sentence[causal[0].connective_char : causal[0].connective_end] == "resulted in"
    o = other[0]  # relation not verbatim: insertion point before the object
    assert o.connective_char == o.connective_end == o.sentence.index("north")
