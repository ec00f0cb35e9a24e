"""LightRAG's modes on the bundled sample: which keywords each mode reads (a scripted fake LLM server — a test
double — writes them), the YAKE stand-in and its skipped-step count, chunk order and the answer."""

import json

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.retrievers.lightrag import LightRAGRetriever, round_robin, weighted_polling
from tests.hierarchy.fake_llm import fake_llm, prompt_of, schema_text

QUESTION = "Into which sea does the river that flows through Marie Curie's birthplace empty?"
LOW, HIGH = "Gdansk", "capital cities of nations"


class RecordingEncoder:
    """TEST DOUBLE: the real encoder, recording every text it is asked to embed."""

    def __init__(self, inner):
        self.inner = inner
        self.model_key, self.model_name = inner.model_key, inner.model_name
        self.texts: list[str] = []

    @property
    def dim(self):
        return self.inner.dim

    def encode(self, texts, desc="encode"):
        self.texts.extend(texts)
        return self.inner.encode(texts, desc=desc)


def scripted(body):
    spec = schema_text(body)
    if "high_level_keywords" in spec:
        return json.dumps({"high_level_keywords": [HIGH], "low_level_keywords": [LOW]})
    return json.dumps({"answer": "Baltic Sea", "supporting_ids": ["P1"]})


@pytest.fixture(scope="module")
def sample():
    return sample_dataset()


def make(tmp_path, encoder, llm=None, **kw):
    settings = method_settings("lightrag", index_root=str(tmp_path / "index"), **kw)
    return LightRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")


@pytest.mark.parametrize("mode, reads_low, reads_high", [
    ("local", True, False), ("global", False, True), ("hybrid", True, True), ("mix", True, True)])
def test_each_mode_reads_its_keyword_level(tmp_path, encoder, sample, mode, reads_low, reads_high):
    rec = RecordingEncoder(encoder)
    with fake_llm(scripted, tmp_path) as (llm, server):
        ret = make(tmp_path, rec, llm, mode=mode)
        ret.index(sample)
        rec.texts.clear()
        out = ret.retrieve([QUESTION], 5)
    assert (LOW in rec.texts) == reads_low and (HIGH in rec.texts) == reads_high
    d = out.details[0]
    assert d["keywords"] == {"high_level": [HIGH], "low_level": [LOW], "source": "llm"}
    assert d["answer"] == "Baltic Sea" and not ret.skipped
    rows = d["context_rows"]
    if mode == "local":  # the entities are the ones nearest to "Gdansk": its passage leads the chunks
        top = ret.local_level(ret.embed_keywords([[LOW]])[0])[0][0]
        assert ret.graph.entity_names[top] == "gdansk"
        assert ret.passage_ids[out.indices[0, 0]] in {ret.passage_ids[p] for p in ret.incidence.passages(top).tolist()}
    assert rows["entities"] > 0 and rows["relationships"] > 0 and rows["chunks"] > 0
    answer_prompt = next(prompt_of(b) for b in server.requests if "supporting_ids" in schema_text(b))
    assert "Entity: " in answer_prompt and "Relationship: " in answer_prompt and "Chunk: " in answer_prompt


def test_global_mode_ranks_the_chunks_of_the_nearest_relations(tmp_path, encoder, sample):
    with fake_llm(scripted, tmp_path) as (llm, _):
        ret = make(tmp_path, encoder, llm, mode="global", answer=False)
        ret.index(sample)
        out = ret.retrieve([QUESTION], 3)
    entities, facts = ret.global_level(ret.embed_keywords([[HIGH]])[0])
    ends = ret.graph.fact_entities
    assert entities == list(dict.fromkeys(int(e) for f in facts for e in ends[f].tolist()))  # both ends, in order
    # the relations' chunks merged round-robin with their entities' chunks (entity chunk first, as LightRAG)
    expected = round_robin(ret.entity_chunks(entities), ret.relation_chunks(facts))
    assert out.indices[0].tolist() == expected[:3]
    assert set(ret.relation_chunks(facts[:1])) & set(expected[:6])


def test_naive_mode_asks_for_no_keywords(tmp_path, encoder, sample):
    with fake_llm(scripted, tmp_path) as (llm, server):
        ret = make(tmp_path, encoder, llm, mode="naive")
        ret.index(sample)
        out = ret.retrieve([QUESTION], 5)
        asked = [schema_text(b) for b in server.requests]
    assert not any("high_level_keywords" in s for s in asked)
    dense = (encoder.encode([QUESTION]) @ ret.passage_emb.T)[0]
    assert out.indices[0].tolist() == torch.topk(dense, 5).indices.tolist()
    assert out.details[0]["context_rows"]["entities"] == 0


def test_llm_free_keywords_are_yake_and_counted(tmp_path, encoder, sample):
    ret = make(tmp_path, encoder)
    ret.index(sample)
    out = ret.retrieve([q.question for q in sample.queries], 5)
    assert ret.skipped == {"keywords": 6}
    kw = out.details[0]["keywords"]
    assert kw["source"] == "yake" and "Marie Curie" in kw["low_level"] and "river that flows" in kw["high_level"]
    assert all("answer" not in d for d in out.details)
    configured_yake = make(tmp_path, encoder, keywords="yake")  # YAKE by choice is not a skipped step
    configured_yake.index(sample)
    configured_yake.retrieve([QUESTION], 5)
    assert not configured_yake.skipped


def test_failed_keyword_call_falls_back_to_yake(tmp_path, encoder, sample):
    with fake_llm(lambda body: "no json here", tmp_path) as (llm, _):
        ret = make(tmp_path, encoder, llm, answer=False)
        ret.index(sample)
        out = ret.retrieve([QUESTION], 5)
    assert out.details[0]["keywords"]["source"] == "yake" and ret.skipped["keywords"] == 1


def test_entity_chunks_expand_one_hop(tmp_path, encoder, sample):
    ret = make(tmp_path, encoder, related_chunks=2)
    ret.index(sample)
    entities = torch.topk(ret.entity_emb @ ret.embed_keywords([["Seine"]])[0], 3).indices.tolist()
    chunks = ret.entity_chunks(entities)
    counts = ret.incidence.neighbour_counts(torch.tensor(entities))
    first = ret.incidence.passages(entities[0])
    best_first = first[torch.argsort(-counts[0, first], stable=True)].tolist()
    assert chunks[: min(2, len(best_first))] == best_first[:2]  # the first entity: its 2 most-connected chunks
    assert len(chunks) <= 2 + 2 + 1 + 2  # quotas 2, 2 (1.5 rounded), 1, plus what unused quota moves on


def test_weighted_polling():
    # quotas 5, 3, 1 for three items; chunk 1 belongs to the first item that has it
    assert weighted_polling([[1, 2, 3, 4, 5, 6], [1, 7, 8, 9], [10, 11]], 5) == [1, 2, 3, 4, 5, 7, 8, 9, 10]
    # the first item has one chunk: its unused quota of 4 goes, one at a time in rank order, to the items that
    # still have chunks (2nd: 3 -> 5, 3rd: 1 -> 3)
    assert weighted_polling([[1], [2, 3, 4, 5, 6, 7], [8, 9, 10]], 5) == [1, 2, 3, 4, 5, 6, 8, 9, 10]
    assert weighted_polling([[4, 5, 6, 7, 8, 9]], 5) == [4, 5, 6, 7, 8] and weighted_polling([], 5) == []


def test_round_robin():
    assert round_robin([1, 2, 3], [4, 2], []) == [1, 4, 2, 3]
