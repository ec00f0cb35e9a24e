"""GraphRAG local and global search on the bundled sample: each step against the algorithm, LLM steps against a
scripted fake LLM server (a test double), stand-ins and skipped steps without one."""

import json
import re

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.retrievers.graphrag_global import NO_DATA_ANSWER, GraphRAGGlobalRetriever
from hyperrag.retrievers.graphrag_local import GraphRAGLocalRetriever
from tests.hierarchy.fake_llm import fake_llm, prompt_of, schema_text

QUESTION = "At which port city does the river that runs through Pierre Curie's birthplace reach the sea?"


@pytest.fixture(scope="module")
def sample():
    return sample_dataset()


def local(tmp_path, encoder, llm=None, **kw):
    settings = method_settings("graphrag_local", index_root=str(tmp_path / "index"), hierarchy={"backend": "cpu"},
                               **kw)
    return GraphRAGLocalRetriever(settings, encoder=encoder, llm=llm, device="cpu")


def glob(tmp_path, encoder, llm=None, **kw):
    settings = method_settings("graphrag_global", index_root=str(tmp_path / "index"), hierarchy={"backend": "cpu"},
                               **kw)
    return GraphRAGGlobalRetriever(settings, encoder=encoder, llm=llm, device="cpu")


@pytest.fixture(scope="module")
def indexed_local(tmp_path_factory, encoder, sample):
    ret = local(tmp_path_factory.mktemp("local"), encoder)
    ret.index(sample)
    return ret


def test_llm_free_local_search_counts_stand_in_reports(indexed_local, sample):
    ret = indexed_local
    assert ret.skipped["community_report"] == ret.reports.tree.num_modules > 0  # every report is a stand-in
    out = ret.retrieve([q.question for q in sample.queries], 10)
    assert out.indices.shape == (6, 10) and all(len(set(r)) == 10 for r in out.indices.tolist())
    assert all("answer" not in d for d in out.details)
    assert (out.scores[:, :-1] > out.scores[:, 1:]).all()  # reciprocal ranks


def test_text_units_follow_entity_order_then_relationship_count(indexed_local):
    ret = indexed_local
    q = ret.encode([QUESTION])
    ents = torch.topk(q @ ret.entity_emb.T, 20, dim=1).indices[0]
    counts = ret.incidence.relation_counts(ents)
    units = ret.text_units(ents.tolist(), counts)
    first_entity = {}
    for i, e in enumerate(ents.tolist()):
        for p in ret.incidence.passages(e).tolist():
            first_entity.setdefault(p, i)
    assert set(units) == set(first_entity)
    keys = [(first_entity[p], -float(counts[first_entity[p], p])) for p in units]
    assert keys == sorted(keys)  # by the first matched entity's order, then its relationships in the unit
    out = ret.retrieve([QUESTION], 10)
    assert out.indices[0, : min(10, len(units))].tolist() == units[:10]  # the ranking starts with the text units


def test_relationships_in_network_first_then_out_network_by_links(indexed_local):
    ret = indexed_local
    ends = ret.graph.fact_entities
    selected = torch.topk(ret.encode([QUESTION]) @ ret.entity_emb.T, 6, dim=1).indices[0].tolist()
    facts = ret.relationships(selected)
    inside = [f for f in facts if int(ends[f, 0]) in selected and int(ends[f, 1]) in selected]
    assert facts[: len(inside)] == inside  # in-network relationships lead
    rank = [int(ret.incidence.degree[ends[f, 0]] + ret.incidence.degree[ends[f, 1]]) for f in inside]
    assert rank == sorted(rank, reverse=True)
    outside = facts[len(inside):]
    assert len(outside) <= ret.settings.top_k_relationships * len(selected)
    assert all((int(ends[f, 0]) in selected) != (int(ends[f, 1]) in selected) for f in outside)


def test_context_parts_respect_their_budget_shares(tmp_path, encoder, sample):
    ret = local(tmp_path, encoder, max_context_tokens=300, community_prop=0.2, text_unit_prop=0.5)
    ret.index(sample)
    ents = torch.topk(ret.encode([QUESTION]) @ ret.entity_emb.T, 20, dim=1).indices[0].tolist()
    from hyperrag.hierarchy.tokens import approx_tokens

    reports = ret.community_rows(ents, 60)
    assert sum(approx_tokens(r.text) for r in reports) <= 60
    rows = ret.local_rows(ents, 90)
    assert sum(approx_tokens(r.text) for r in rows) <= 90
    assert any(r.key.startswith("entity:") for r in rows)


def test_local_search_answers_from_its_context(tmp_path, encoder, sample):
    def respond(body):  # TEST DOUBLE: cite the first "Source:" row, by the ID the prompt gave it
        shown = re.findall(r'<passage id="(P\d+)">\n(\w+)', prompt_of(body))
        first_source = next(pid for pid, kind in shown if kind == "Source")
        return json.dumps({"answer": "Le Havre", "supporting_ids": [first_source]})

    with fake_llm(respond, tmp_path, max_invalid_retries=0) as (llm, server):
        ret = local(tmp_path, encoder, llm, summaries={"max_llm_modules": 0})  # reports stay stand-ins
        ret.index(sample)
        out = ret.retrieve([QUESTION], 5)
    d = out.details[0]
    assert d["answer"] == "Le Havre" and d["answer_ok"]
    prompt = prompt_of(server.requests[-1])
    kinds = re.findall(r'<passage id="P\d+">\n(\w+)', prompt)
    # GraphRAG's order: reports, then the entity and relationship tables, then the sources
    assert kinds[0] == "Report" and "Entity" in kinds and "Relationship" in kinds and kinds[-1] == "Source"
    assert kinds.index("Entity") < kinds.index("Source")
    ents = torch.topk(ret.encode([QUESTION]) @ ret.entity_emb.T, 20, dim=1).indices[0]
    units = ret.text_units(ents.tolist(), ret.incidence.relation_counts(ents))
    assert d["supporting_ids"] == [ret.passage_ids[units[0]]]  # the cited source row, read back as its passage
    assert ret.skipped["community_report"] == ret.reports.tree.num_modules  # the cap counts as skipped


# ---- global search ------------------------------------------------------------------------------------------
def map_then_reduce(body):
    """TEST DOUBLE: map points with scores 10, 0 and 90 citing R2, R3, R1; the reduce and answer tasks answer."""
    spec = schema_text(body)
    if '"points"' in spec:
        return json.dumps({"points": [
            {"description": "weak point", "score": 10, "report_ids": ["R2"]},
            {"description": "useless point", "score": 0, "report_ids": ["R3"]},
            {"description": "strong point", "score": 90, "report_ids": ["R1", "R99"]}]})
    return json.dumps({"answer": "reduced answer", "supporting_ids": ["A1"]})


def test_reduce_keeps_the_highest_scored_points(tmp_path, encoder, sample):
    with fake_llm(map_then_reduce, tmp_path) as (llm, server):
        ret = glob(tmp_path, encoder, llm, max_reports=3, summaries={"max_llm_modules": 0})
        ret.index(sample)
        out = ret.retrieve([QUESTION], 10)
        reduce_prompts = [prompt_of(b) for b in server.requests if "Analyst points" in prompt_of(b)]
        map_prompts = [prompt_of(b) for b in server.requests if '"points"' in schema_text(b)]
    assert len(map_prompts) == 1 and len(reduce_prompts) == 1
    reduced = reduce_prompts[0]
    assert reduced.index("strong point") < reduced.index("weak point") and "useless point" not in reduced
    assert "Importance: 90" in reduced
    d = out.details[0]
    assert d["answer"] == "reduced answer" and d["points_reduced"] == 2
    assert [p[0] for p in d["top_points"]] == [90, 10]
    strong_report = d["top_points"][0][2][0]  # R1's report (R99 was never shown: dropped)
    assert len(d["top_points"][0][2]) == 1
    first = ret.report_passages(int(strong_report.split(":")[1]), (ret.encode([QUESTION]) @ ret.passage_emb.T)[0])
    assert out.indices[0, : len(first[:10])].tolist() == first[:10]  # the best point's report ranks first


def test_reduce_budget_drops_the_lowest_points_first(tmp_path, encoder, sample):
    with fake_llm(map_then_reduce, tmp_path) as (llm, server):
        ret = glob(tmp_path, encoder, llm, max_reports=3, reduce_context_tokens=8, summaries={"max_llm_modules": 0})
        ret.index(sample)
        ret.retrieve([QUESTION], 5)
        reduced = next(prompt_of(b) for b in server.requests if "Analyst points" in prompt_of(b))
    assert "strong point" in reduced and "weak point" not in reduced


def test_no_point_above_zero_is_i_do_not_know(tmp_path, encoder, sample):
    def zero(body):
        if '"points"' in schema_text(body):
            return json.dumps({"points": [{"description": "nothing relevant", "score": 0, "report_ids": []}]})
        raise AssertionError("no reduce call when every point scores 0")

    with fake_llm(zero, tmp_path) as (llm, _):
        ret = glob(tmp_path, encoder, llm, max_reports=2, summaries={"max_llm_modules": 0})
        ret.index(sample)
        out = ret.retrieve([QUESTION], 5)
    assert out.details[0]["answer"] == NO_DATA_ANSWER and out.details[0]["points_reduced"] == 0


def test_llm_free_global_scores_reports_by_cosine(tmp_path, encoder, sample):
    ret = glob(tmp_path, encoder, map_context_tokens=40)
    ret.index(sample)
    out = ret.retrieve([q.question for q in sample.queries], 10)
    calls = sum(d["map_calls"] for d in out.details)
    assert calls > len(sample.queries)  # small windows: several map batches per query
    assert ret.skipped["global_map"] == calls  # every batch fell back to the stand-in, counted
    scores = [p[0] for p in out.details[0]["top_points"]]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 100 for s in scores)
    assert all("answer" not in d for d in out.details)


def test_reports_at_a_community_level(indexed_local):
    reports = indexed_local.reports
    top = reports.at_level(0)
    assert set(reports.entity_community(0).tolist()) == set(top.tolist())  # level 0 partitions every entity
    finest = reports.at_level(99)  # deeper than the hierarchy: its finest level
    assert set(reports.entity_community(99).tolist()) == set(finest.tolist())
    assert len(finest) >= len(top)
    rank = reports.rank[top]
    assert (rank[:-1] >= rank[1:]).all()
