"""The LLM-free OpenIE stand-in (``extractor=spacy``): entities and triples of a three-passage fixture, the cache (a
rerun parses nothing), the config choice, the provenance record and the ``llm=none`` error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from hyperrag.data.types import Corpus, Dataset, Passage
from hyperrag.errors import InputError
from hyperrag.extraction import spacy_openie as so
from hyperrag.extraction.settings import ExtractorSettings
from hyperrag.extraction.spacy_pipeline import MODEL_LABEL
from tests.conftest import REPO_ROOT

PASSAGES = [
    Passage("p0", "Golmaal Again",
            "Golmaal Again is a 2017 Indian action comedy film directed by Rohit Shetty. It stars Ajay Devgn."),
    Passage("p1", "Rohit Shetty (director)",
            "Rohit Shetty (born 14 March 1973) is an Indian film director. He directed Golmaal Again."),
    Passage("p2", "Teutberga",
            "Teutberga( died 11 November 875) was a queen of Lotharingia by marriage to Lothair II. She was a "
            "daughter of Bosonid Boso the Elder."),
]


def settings(triples: str = "title_subject", **over) -> ExtractorSettings:
    base = {"source": "spacy", "triples": triples, "dates": True, "noun_chunks": True, "batch_size": 2,
            "shard_size": 2}
    return ExtractorSettings(**{**base, **over})


def extract(tmp_path: Path, s: ExtractorSettings):
    path, report = so.spacy_openie(PASSAGES, s, tmp_path / "openie", cache_dir=tmp_path, progress=False)
    return json.loads(path.read_text())["docs"], report


def test_title_subject_triples_make_the_bridge_entity_a_shared_node(tmp_path):
    docs, report = extract(tmp_path, settings())
    assert report.parsed == 3 and not report.reused_file
    assert [d["idx"] for d in docs] == [0, 1, 2] and docs[0]["passage"].startswith("Golmaal Again\n")
    film, director, queen = ([tuple(t) for t in d["extracted_triples"]] for d in docs)
    assert ("Golmaal Again", "directed by", "Rohit Shetty") in film
    assert ("Golmaal Again", "stars", "Ajay Devgn") in film  # "It stars ...": the pronoun is the title
    # the title loses its disambiguation, so the director's passage holds the node the film's passage names
    assert docs[1]["extracted_entities"][0] == "Rohit Shetty"
    assert ("Rohit Shetty", "directed", "Golmaal Again") in director
    assert any(s == "Rohit Shetty" and o == "14 March 1973" for s, _, o in director)  # dates are entities
    assert ("Teutberga", "marriage to", "Lothair II") in queen  # a proper-noun chunk NER missed
    assert ("Teutberga", "daughter of", "Bosonid Boso the Elder") in queen
    assert ("Teutberga", "queen of", "Lotharingia") in queen
    assert docs[2]["sentences"][1] == {"text": "She was a daughter of Bosonid Boso the Elder.",
                                       "entities": ["Bosonid Boso the Elder"]}


def test_designs_and_options_differ_as_documented(tmp_path):
    subject, _ = extract(tmp_path, settings("subject_verb"))
    # no title: a pronoun-subject sentence ties nothing
    assert not any(o == "Ajay Devgn" for _, _, o in subject[0]["extracted_triples"])
    no_dates, _ = extract(tmp_path, settings(dates=False))
    assert not any(o == "14 March 1973" for _, _, o in no_dates[1]["extracted_triples"])
    both, _ = extract(tmp_path, settings("title_and_subject"))
    assert {tuple(t) for t in subject[1]["extracted_triples"]} <= {tuple(t) for t in both[1]["extracted_triples"]} or \
        not subject[1]["extracted_triples"]


def test_a_rerun_parses_nothing_and_a_new_design_reuses_the_parses(tmp_path, monkeypatch):
    extract(tmp_path, settings())
    shards = sorted((tmp_path / "spacy").rglob("shard-*.spacy"))
    assert len(shards) == 2  # shard_size 2: a killed run resumes from the last finished shard

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(so, "parse", no_parsing)
    _, again = extract(tmp_path, settings())
    assert again.reused_file and again.parsed == 0
    docs, other = extract(tmp_path, settings("subject_verb"))  # another design: the cached parses, re-read
    assert not other.reused_file and other.parsed == 0 and other.reused_parses == 3
    assert len(docs) == 3


def test_a_killed_run_resumes_from_its_shards(tmp_path, monkeypatch):
    s = settings()
    so.parsed_corpus(PASSAGES[:2], s, tmp_path, progress=False)  # the first shard finished, then killed
    calls = []
    real = so.parse
    monkeypatch.setattr(so, "parse", lambda texts, **kw: calls.append(list(texts)) or real(calls[-1], **kw))
    _, report = extract(tmp_path, s)
    assert report.parsed == 1 and report.reused_parses == 2 and len(calls) == 1


def compose_retrieve(*overrides: str):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("retrieve", overrides=["tracking=none", *overrides])


def test_the_config_picks_the_extraction():
    assert instantiate(compose_retrieve().extractor).source == "llm"  # the default: today's behaviour
    chosen = instantiate(compose_retrieve("extractor=spacy").extractor)
    assert chosen.source == "spacy" and chosen.triples == "title_subject"


def test_spacy_takes_precedence_over_a_released_file_and_is_recorded(tmp_path):
    from hyperrag.runners.prepare import defer_to_extractor, released_model, resolve_openie

    released = tmp_path / "openie_gpt-3.5-turbo-1106.json"
    released.write_text("{}")
    data = Dataset("fixture", Corpus(PASSAGES), [], released)
    kept = resolve_openie(Dataset("fixture", Corpus(PASSAGES), [], released), None, tmp_path,
                          extractor=instantiate(compose_retrieve().extractor))
    assert kept.openie_path == released
    assert kept.extraction == {"source": "file", "model": "gpt-3.5-turbo-1106", "path": str(released)}
    out = resolve_openie(data, None, tmp_path, extractor=settings())
    assert out.openie_path != released and out.openie_path.name.startswith("openie_spacy_title_subject_")
    assert out.extraction["source"] == "spacy" and out.extraction["model"] == MODEL_LABEL
    assert out.extraction["path"] == str(out.openie_path)
    assert released_model("openie_results_ner_meta-llama_Llama-3.3-70B-Instruct.json") == \
        "meta-llama_Llama-3.3-70B-Instruct"
    none = resolve_openie(Dataset("x", Corpus(PASSAGES), []), None, tmp_path,
                          extractor=instantiate(compose_retrieve().extractor))
    assert none.extraction == {"source": "none", "model": None, "path": None}
    hug = instantiate(compose_retrieve("method=hugrag", "llm=none").method.retriever)
    assert hug.extraction == "graphrag" and defer_to_extractor(hug, settings()).extraction == "none"
    assert defer_to_extractor(hug, instantiate(compose_retrieve().extractor)).extraction == "graphrag"


def test_no_triples_without_an_llm_names_extractor_spacy():
    from hyperrag.index.kg_index import load_or_build_kg_index

    with pytest.raises(InputError, match="extractor=spacy"):
        load_or_build_kg_index(Dataset("fixture", Corpus(PASSAGES), []), encoder=None, settings=None)


@pytest.mark.slow  # MiniLM embeds the fixture's entities and facts
def test_the_python_api_builds_an_entity_graph_without_an_llm(tmp_path, monkeypatch):
    from hyperrag import RAG

    monkeypatch.setenv("HYPERRAG_CACHE", str(tmp_path / "cache"))
    docs = [{"id": p.id, "title": p.title, "text": p.text} for p in PASSAGES]
    with RAG("hipporag2", index_dir=tmp_path / "idx", llm="none", extractor="spacy") as rag:
        built = rag.index(docs)
        assert built["entities"] > 0 and built["extraction"]["extracted"] == 3
        hits = rag.retrieve(["Who directed Golmaal Again?"], k=2)[0]
    assert {h.passage_id for h in hits} & {"p0", "p1"}


ABSTRACT = Passage("a0", "", "Atrial fibrillation patients frequently require polypharmacy, increasing the risk of "
                             "drug-drug interactions and hepatotoxicity. We analyzed the use of drugs potentially "
                             "associated with liver injury in anticoagulated patients.")


def test_an_untitled_abstract_gets_concept_triples_and_titled_passages_are_unchanged(tmp_path):
    # names only: a title-less scientific abstract names nothing NER knows, so it gets no entity and no triple
    # (HolisQA medicine: 802 of 1,068 passages of a 300-abstract cut had no triple — isolated in every graph)
    def one(s, passages):
        path, _ = so.spacy_openie(passages, s, tmp_path / "openie", cache_dir=tmp_path, progress=False)
        return path, json.loads(path.read_text())["docs"]

    _, (names,) = one(settings(concepts="none"), [ABSTRACT])
    assert names["extracted_entities"] == [] and names["extracted_triples"] == []
    _, (concepts,) = one(settings(concepts="untitled"), [ABSTRACT])
    triples = {tuple(t) for t in concepts["extracted_triples"]}
    assert ("Atrial fibrillation patients", "require", "polypharmacy") in triples  # subject concept → verb → object
    assert ("Atrial fibrillation patients", "risk of", "hepatotoxicity") in triples
    assert "liver injury" in concepts["extracted_entities"] and "We" not in concepts["extracted_entities"]
    # every passage titled: `untitled` is the names-only design, same file (cached graphs keep their keys)
    path_none, docs_none = one(settings(concepts="none"), PASSAGES)
    path_untitled, docs_untitled = one(settings(concepts="untitled"), PASSAGES)
    assert path_none == path_untitled and docs_none == docs_untitled
    # `all`: titled passages take concepts too
    _, docs_all = one(settings(concepts="all"), PASSAGES)
    assert "Indian action comedy film" in docs_all[0]["extracted_entities"]
    assert "Indian action comedy film" not in docs_none[0]["extracted_entities"]


def test_a_title_naming_no_entity_keys_the_file_as_untitled(tmp_path):
    # "(disambiguation)" is a title string but names no entity: passage_triples treats the passage as untitled
    # (concepts apply), so the file must not be the names-only one — both use title_entity's one rule
    odd = Passage("a1", "(disambiguation)", ABSTRACT.text)
    assert so.title_entity(odd.title) == "" and so.title_entity("Rohit Shetty (director)") == "Rohit Shetty"
    none = so.openie_file([odd], settings(concepts="none"), tmp_path)
    untitled = so.openie_file([odd], settings(concepts="untitled"), tmp_path)
    assert none != untitled
    titled = [so.openie_file(PASSAGES, settings(concepts=c), tmp_path) for c in ("none", "untitled")]
    assert titled[0] == titled[1]
