"""The shared spaCy pipeline: sentences with their named entities, parsed in order."""

from hyperrag.extraction.spacy_pipeline import (
    MODEL_LABEL,
    load_pipeline,
    named_entities,
    parse,
    sentence_entities,
)


def test_pipeline_is_loaded_once():
    assert load_pipeline() is load_pipeline()
    assert "en_core_web_sm" in MODEL_LABEL


def test_sentences_carry_their_entities_in_order():
    texts = ["Marie Curie was born in Warsaw. She moved to Paris in 1891.", "The Vistula flows into the Baltic Sea."]
    docs = list(parse(texts, batch_size=1))
    assert [d.text for d in docs] == texts
    sents = sentence_entities(docs[0])
    assert [s.text for s in sents] == ["Marie Curie was born in Warsaw.", "She moved to Paris in 1891."]
    assert sents[0].entities == ("Marie Curie", "Warsaw")
    assert "Paris" in sents[1].entities and "1891" in sents[1].entities
    assert "Vistula" in named_entities(list(docs[1].ents))


def test_the_ner_component_set_runs_only_the_recogniser_and_the_sentence_segmenter():
    nlp = load_pipeline(components="ner")
    assert nlp.pipe_names == ["senter", "ner"] and nlp is load_pipeline(components="ner") is not load_pipeline()
    doc = next(parse(["Marie Curie was born in Warsaw. She moved to Paris in 1891."], components="ner"))
    sents = sentence_entities(doc)
    assert [s.text for s in sents] == ["Marie Curie was born in Warsaw.", "She moved to Paris in 1891."]
    assert sents[0].entities == ("Marie Curie", "Warsaw")
