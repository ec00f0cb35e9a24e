"""LinearRAG (method=linearrag): the spaCy Tri-Graph, semantic bridging in both forms, an insert that parses only the
new passage, and retrieve.py on the bundled sample (LLM-free and with the oracle reader)."""

import json

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data.types import Corpus, Dataset, Passage
from hyperrag.graph.trigraph import (
    MentionStore,
    PassageMentions,
    build_trigraph,
    parse_mentions,
    question_entities,
    with_title_mentions,
)
from hyperrag.ops.semantic_bridging import MentionIndex, bridge_iterative, bridge_vectorized
from hyperrag.retrievers.linearrag import LinearRAGRetriever

PASSAGES = [
    "Marie Curie was born in Warsaw. She studied physics.",
    "The Vistula flows through Warsaw. Warsaw is the capital of Poland.",
    "The Vistula empties into the Baltic Sea.",
]


def hand_mentions() -> list[PassageMentions]:
    """The fixture's NER, written out (what the Tri-Graph is assembled from)."""
    return [PassageMentions((("Marie Curie was born in Warsaw.", ("Marie Curie", "Warsaw")),)),
            PassageMentions((("The Vistula flows through Warsaw.", ("Vistula", "Warsaw")),
                             ("Warsaw is the capital of Poland.", ("Warsaw", "Poland")))),
            PassageMentions((("The Vistula empties into the Baltic Sea.", ("Vistula", "Baltic Sea")),))]


def test_trigraph_on_three_passages_has_the_expected_mentions_sentences_and_passages():
    g = build_trigraph(PASSAGES, hand_mentions(), adjacent=True)
    assert g.entity_names == ["Marie Curie", "Warsaw", "Vistula", "Poland", "Baltic Sea"]
    assert g.num_sentences == 4 and g.num_passages == 3 and g.num_nodes == 8  # "She studied physics." names none
    es = g.entity_sentence.to_dense()
    assert es.tolist() == [[1, 0, 0, 0], [1, 1, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1]]
    assert g.sentence_passage.to_dense().tolist() == [[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]]
    # passage-entity edges weighted count / Σ counts in the passage (Warsaw twice in passage 1: 2 / 4)
    edges = {(p, g.entity_names[e]): w for (p, e), w in zip(g.passage_entity.T.tolist(),
                                                              g.passage_entity_weight.tolist())}
    assert edges == {(0, "Marie Curie"): 0.5, (0, "Warsaw"): 0.5, (1, "Vistula"): 0.25, (1, "Warsaw"): 0.5,
                     (1, "Poland"): 0.25, (2, "Vistula"): 0.5, (2, "Baltic Sea"): 0.5}
    assert g.adjacent.T.tolist() == [[0, 1], [1, 2]]
    edge_index, _ = g.ppr_edges()
    assert edge_index.shape[1] == 9 and int(edge_index.min()) == 0 and int(edge_index.max()) == 7
    assert build_trigraph(PASSAGES, hand_mentions(), adjacent=False).adjacent.shape == (2, 0)


def test_spacy_ner_finds_the_shared_entity_in_both_passages():
    mentions = parse_mentions(PASSAGES)
    assert "Warsaw" in mentions[0].entities and "Warsaw" in mentions[1].entities
    assert all(ents for m in mentions for _, ents in m.sentences)  # sentences without an entity are left out
    assert not any("studied" in s for s, _ in mentions[0].sentences)


def test_a_question_names_the_entities_its_text_would_as_a_passage():
    """Questions and passages are read by one rule (labels and surface forms): a question's seeds are the
    passage reading of the same text, lower-cased and each once; ORDINAL / CARDINAL are left out of both."""
    text = "Was Marie Curie born in Warsaw, the capital of Poland, before the second of the two Curies?"
    as_passage = list(dict.fromkeys(e.lower() for e in parse_mentions([text])[0].entities))
    seeds, repeated = question_entities([text, "Warsaw or warsaw?"])
    assert seeds == as_passage and repeated == ["warsaw"]  # one seed per lower-cased name
    assert seeds[:3] == ["marie curie", "warsaw", "poland"] and not {"second", "two"} & set(seeds)


def test_ner_components_keep_the_entities_and_their_sentences():
    """components="ner" (NER + sentence segmenter, the default) finds what the full pipeline finds on the fixture,
    and the two component sets keep their NER records apart."""
    from hyperrag.graph.trigraph import mention_store_path

    assert parse_mentions(PASSAGES, components="ner") == parse_mentions(PASSAGES, components="full")
    assert mention_store_path("r", components="ner") != mention_store_path("r", components="full")


def test_a_line_break_ends_a_sentence_so_no_entity_straddles_title_and_text():
    """line_break_sentences=true: "Title\ntext" gives the title its own sentence; without it the small
    model reads the title and the start of the text as one entity."""
    text = "Climate Dynamics\nClimate Dynamics is a journal published by Springer."
    split = parse_mentions([text], line_breaks=True)[0]
    assert split.sentences[0] == ("Climate Dynamics", ("Climate Dynamics",))
    assert not any("\n" in e for e in split.entities) and not any("\n" in s for s, _ in split.sentences)
    assert any("\n" in e for e in parse_mentions([text])[0].entities)  # the defect the setting removes


def test_title_mentions_add_each_passages_title_as_its_entity_a_labelled_departure():
    """title_mentions=true (not the authors'): the title joins the first sentence when that sentence opens with
    it, else the title line becomes a sentence naming only it; a title the NER found, or none, changes nothing."""
    texts = ["Ma Femme\nMa Femme is a film by Lothair.", "Warsaw\nIt lies on the Vistula.", "Poland\nPoland is big."]
    ner = [PassageMentions((("Ma Femme\nMa Femme is a film by Lothair.", ("Lothair",)),)),
           PassageMentions((("It lies on the Vistula.", ("Vistula",)),)),
           PassageMentions((("Poland\nPoland is big.", ("Poland",)),))]
    out = with_title_mentions(ner, ["Ma Femme", "Warsaw", "Poland"])
    assert out[0].sentences == (("Ma Femme\nMa Femme is a film by Lothair.", ("Ma Femme", "Lothair")),)
    assert out[1].sentences == (("Warsaw", ("Warsaw",)), ("It lies on the Vistula.", ("Vistula",)))
    assert out[2] == ner[2] and with_title_mentions(ner, ["", "", ""]) == ner
    g = build_trigraph(texts, out, adjacent=False)
    edges = {(p, g.entity_names[e]) for p, e in g.passage_entity.T.tolist()}
    assert {(0, "Ma Femme"), (1, "Warsaw"), (2, "Poland")} <= edges
    assert method_settings("linearrag").title_mentions is False  # off by default


def test_vectorized_bridging_sums_a_repeated_seed_as_the_authors_sparse_vector():
    """Two question entities matched to the same graph entity: the authors' coalesced seed vector spreads their sum
    (0.3 + 0.3 reaches the threshold 0.5); the entity's own weight is one score (their scatter)."""
    g = build_trigraph(PASSAGES, hand_mentions(), adjacent=False)
    mentions = MentionIndex.from_coo(g.entity_sentence, "cpu")
    sim = torch.tensor([1.0, 0.7, 0.1, 0.9])
    out = bridge_vectorized(mentions, sim, [(0, 0.3), (0, 0.3)], 2, 0.5, 1)
    assert 1 in out.activated and out.weight[1].item() == pytest.approx(0.6, abs=1e-6)
    assert out.weight[0].item() == pytest.approx(0.3 + 0.6, abs=1e-6)
    assert 1 not in bridge_iterative(mentions, sim, [(0, 0.3), (0, 0.3)], 2, 0.5, 1).activated  # per entity: 0.3


@pytest.mark.parametrize("bridge", [bridge_iterative, bridge_vectorized])
def test_bridging_reaches_a_second_hop_entity_through_a_sentence(bridge):
    g = build_trigraph(PASSAGES, hand_mentions(), adjacent=False)
    mentions = MentionIndex.from_coo(g.entity_sentence, "cpu")
    sim = torch.tensor([0.8, 0.7, 0.1, 0.9])  # the question's cosine to each sentence
    out = bridge(mentions, sim, [(0, 0.9)], 3, 0.5, 1)  # seed: Marie Curie
    # round 1: Marie Curie's sentence (0.9 x 0.8 = 0.72) reaches Warsaw; round 2: Warsaw's best unused sentence,
    # "The Vistula flows through Warsaw." (0.72 x 0.7 = 0.504), reaches the Vistula; the Baltic Sea is a third hop
    assert set(out.activated) == {0, 1, 2}
    assert out.weight[2].item() == pytest.approx(0.504, abs=1e-6) and out.weight[4].item() == 0.0
    assert out.weight[3].item() == 0.0  # "Warsaw is the capital of Poland." is not Warsaw's top sentence
    # one round fewer: no second hop
    assert 2 not in bridge(mentions, sim, [(0, 0.9)], 2, 0.5, 1).activated
    # a threshold above 0.504 stops the bridge at the sentence
    assert 2 not in bridge(mentions, sim, [(0, 0.9)], 3, 0.6, 1).activated


def test_the_two_bridging_forms_differ_as_the_authors_do():
    """iterative adds one entity x sentence product per reach; vectorized sums the round's sentences."""
    g = build_trigraph(PASSAGES, hand_mentions(), adjacent=False)
    mentions = MentionIndex.from_coo(g.entity_sentence, "cpu")
    sim = torch.tensor([0.8, 0.7, 0.1, 0.9])
    it = bridge_iterative(mentions, sim, [(0, 0.9)], 3, 0.5, 1)
    vec = bridge_vectorized(mentions, sim, [(0, 0.9)], 3, 0.5, 1)
    assert it.activated[0][1] == 2 and vec.activated[0][1] == 1  # the seed re-reached: tier 2 vs round 1
    assert it.weight[1].item() == pytest.approx(0.72 + 0.504, abs=1e-6)
    assert vec.weight[1].item() == pytest.approx(0.72 + 0.504, abs=1e-6)
    assert it.weight[0].item() == pytest.approx(0.9 + 0.72, abs=1e-6) == vec.weight[0].item()


def dataset(texts: list[str]) -> Dataset:
    return Dataset("trio", Corpus([Passage(f"p{i}", "", t) for i, t in enumerate(texts)]), [])


def test_index_stages_are_timed_apart_from_the_per_query_stages(tmp_path):
    """Retriever.timed records the index's stages in the method's own record (``index_stage_seconds``, rounded
    to the millisecond, reset by each index()) and the query stages in ``stage_seconds`` (per-query latencies)."""
    from tests.reliability.doubles import HashEncoder

    ret = LinearRAGRetriever(method_settings("linearrag", index_root=str(tmp_path)), encoder=HashEncoder(),
                             device="cpu")
    ret.index(dataset(PASSAGES))
    stages = ret.describe()["index_stage_seconds"]
    assert list(stages) == ["ner", "embed", "graph"] and all(v >= 0 and round(v, 3) == v for v in stages.values())
    assert not ret.stage_seconds  # an index stage is no per-query latency
    ret.retrieve(["Into which sea does the river of Warsaw flow?"], 2)
    assert set(ret.stage_seconds) == {"seed", "bridging", "ppr"}
    ret.index(dataset(PASSAGES[:2]))
    assert list(ret.describe()["index_stage_seconds"]) == ["ner", "embed", "graph"]
    assert set(ret.stage_seconds) == {"seed", "bridging", "ppr"}


def test_the_runner_extracts_no_triples_for_linearrag_and_records_its_own_ner(tmp_path):
    """One mechanism for every method that reads no triples (Retriever.uses_triples): LinearRAG's record names its
    own spaCy NER, a passages-only method's says nothing was extracted; neither asks any extractor for triples."""
    from hyperrag.data import sample_dataset
    from hyperrag.extraction.settings import ExtractorSettings
    from hyperrag.extraction.spacy_pipeline import MODEL_LABEL
    from hyperrag.runners.prepare import prepare_dataset, retriever_class

    spacy = ExtractorSettings(source="spacy", triples="title_subject", dates=True, noun_chunks=True, batch_size=8,
                              shard_size=64)
    for method, record in (("linearrag", {"source": "spacy", "model": MODEL_LABEL, "path": None,
                                          "style": "tri_graph (the method's own NER)"}),
                           ("bm25", {"source": "none", "model": None, "path": None,
                                     "reason": "the method reads passages only"})):
        cls = retriever_class(method_settings(method))
        data = prepare_dataset(sample_dataset(), None, tmp_path, extractor=spacy, uses_triples=cls.uses_triples,
                               own_extraction=cls.own_extraction())
        assert not cls.uses_triples and data.extraction == record
    assert not (tmp_path / "openie").exists() and not (tmp_path / "spacy").exists()  # nothing extracted


@pytest.mark.slow  # the real spaCy pipeline and MiniLM (~10 s on 2 cores)
def test_insert_adds_a_passages_entities_without_a_rebuild(tmp_path, encoder):
    settings = method_settings("linearrag", index_root=str(tmp_path / "index"))
    ret = LinearRAGRetriever(settings, encoder=encoder, device="cpu")
    ret.index(dataset(PASSAGES[:2]))
    assert ret.parsed == 2 and not any("Baltic Sea" in n for n in ret.tri.entity_names)
    ret.index(dataset(PASSAGES))  # the third passage inserted: only it is parsed, the others read from the store
    assert ret.parsed == 1
    assert any("Baltic Sea" in n for n in ret.tri.entity_names) and ret.tri.num_passages == 3  # spaCy: "the Baltic Sea"
    store = next((tmp_path / "index" / "linearrag").glob("mentions-*.jsonl"))
    assert len(MentionStore(store).records) == 3
    out = ret.retrieve(["Into which sea does the river of Warsaw flow?"], 3)
    assert out.indices.shape == (1, 3) and out.details[0]["seed_entities"] == ["Warsaw"]
    ret.index(dataset(PASSAGES[1:]))  # a passage deleted: its entities go with it, nothing is parsed
    assert ret.parsed == 0 and "Marie Curie" not in ret.tri.entity_names


@pytest.mark.slow
@pytest.mark.parametrize("llm", ["none", "oracle"])
def test_retrieve_py_runs_linearrag_on_the_sample(tmp_path, llm):
    from tests.test_retrieve_baselines import compose_retrieve, retrieve, rows

    metrics = retrieve.run(compose_retrieve(tmp_path, "method=linearrag", f"llm={llm}"))
    out = rows(tmp_path)
    assert len(out) == 6 and all(len(r["ranked_ids"]) == 10 == len(set(r["ranked_ids"])) for r in out)
    assert metrics["recall@10"] >= 60.0
    record = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert record["graph"]["entities"] > 0 and record["llm_tokens_at_index"] == 0
    if llm == "none":
        assert metrics["llm_label"] == "LLM-free" and metrics["llm_steps_skipped"] == {"answer": 6}
    else:  # the index asks the oracle nothing; the reader answers
        assert metrics["llm_label"] == "upper bound (oracle)" and "answer" not in metrics["llm_steps_skipped"]
        assert set(record["llm_usage"]) - {"total"} == {"grounded_answer"}  # the oracle is asked only to answer


@pytest.mark.slow
def test_the_api_indexes_inserts_and_deletes_without_an_llm(tmp_path):
    """RAG("linearrag", llm="none"): raw texts, no triples; an insert parses only its passage and its entities are
    found; a delete's entities are gone, nothing parsed."""
    from hyperrag import RAG

    with RAG("linearrag", index_dir=tmp_path / "idx", llm="none") as rag:
        rag.index([{"id": f"p{i}", "title": "", "text": t} for i, t in enumerate(PASSAGES[:2])])
        rag.insert([{"id": "p2", "title": "", "text": PASSAGES[2]}])
        hits = rag.retrieve("Into which sea does the Vistula flow?", k=3)[0]
        assert hits[0].passage_id.startswith("p2")
        assert rag._retriever.parsed == 1 and any("Baltic Sea" in n for n in rag._retriever.tri.entity_names)
        rag.delete(["p0"])
        hits = rag.retrieve("Where was Marie Curie born?", k=3)[0]
        assert len(hits) == 2 and not any(h.passage_id.startswith("p0") for h in hits)
        assert rag._retriever.parsed == 0 and "Marie Curie" not in rag._retriever.tri.entity_names
