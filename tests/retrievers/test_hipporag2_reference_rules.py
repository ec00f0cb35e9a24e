"""Issue 41: three rules of HippoRAG 2's released code (``hipporag==2.0.0a4``) that ``method=hipporag2`` follows —
its seed tie order at ``link_top_k``, a failed filter call ranking by dense retrieval, and repeated passages
merged — on the bundled 12-passage sample."""

import json
from dataclasses import replace

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.data.types import Corpus, Passage
from hyperrag.llm.types import TaskResult
from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever


class ScriptedFilter:
    """SCRIPTED, no model: our fact-filter task answered by ``decide(question, keys)`` (``None``: the call
    failed)."""

    available = True

    def __init__(self, decide):
        self.decide = decide

    def complete_structured_batch(self, task, inputs, progress=False):
        out = []
        for x in inputs:
            kept = self.decide(x["query"], [k for k, _ in x["facts"]])
            out.append(TaskResult(task="fact_filter", ok=kept is not None, value=kept))
        return out


def retriever(tmp_path, encoder, llm=None, **overrides):
    r = HippoRAG2Retriever(method_settings("hipporag2", index_root=str(tmp_path), **overrides), encoder=encoder,
                           llm=llm, device="cpu")
    r.index(sample_dataset())
    return r


def reference_order(names, vertex, named, weight, k):
    """2.0.0a4's ``graph_search_with_fact_entities`` + ``get_top_k_weights``, written out: phrases into a set of
    ``(phrase, phrase_id)``, a dict in that set's order, a stable sort by score, the first ``k``."""
    phrases_and_ids = set()
    for e in named:
        phrases_and_ids.add((names[e], vertex[e]))
    linking_score_map = {}
    for phrase, phrase_id in phrases_and_ids:
        linking_score_map[phrase] = weight[phrase_id]
    top = sorted(linking_score_map.items(), key=lambda x: x[1], reverse=True)[:k]
    return [names.index(p) for p, _ in top]


def test_seed_ties_ordered_and_as_the_reference(tmp_path, encoder):
    r = retriever(tmp_path, encoder)
    names = r.graph.entity_names
    ents = torch.tensor([[[0, 1], [2, 3], [4, 5]]])  # three kept facts, six entities, all tied
    keep = torch.ones(1, 3, dtype=torch.bool)
    weight = torch.zeros(1, r.graph.num_entities, dtype=torch.float64)
    weight[0, :6] = 0.25
    weight[0, 5] = 0.5
    # ordered: the larger weight first, then ties in the order the facts name them (best fact, subject first)
    assert r.top_seeds(ents, keep, weight, 3) == [[5, 0, 1]]
    # reference: the set's iteration order, exactly as the reference's code forms it (vertex ids: sorted names)
    ref = replace(r.settings, seed_ties="reference")
    r.settings = ref
    vertex_weight = {r.reference_vertex[e]: w for e, w in enumerate(weight[0].tolist())}
    want = reference_order(names, r.reference_vertex, [0, 1, 2, 3, 4, 5],
                           [vertex_weight[v] for v in range(len(names))], 3)
    assert r.top_seeds(ents, keep, weight, 3) == [want]
    assert r.reference_vertex == [sorted(names).index(n) for n in names]


def test_a_failed_filter_call_ranks_by_dense_retrieval(tmp_path, encoder):
    ds = sample_dataset()
    questions = [q.question for q in ds.queries]
    failed = {questions[0]}
    llm = ScriptedFilter(lambda q, keys: None if q in failed else keys)
    r = retriever(tmp_path, encoder, llm=llm)
    out = r.retrieve(questions, 5).indices
    dense = encoder.encode(questions) @ r.passage_emb.T
    assert out[0].tolist() == torch.topk(dense[0], 5).indices.tolist()  # the dense fallback
    graph = retriever(tmp_path, encoder).retrieve(questions, 5).indices  # LLM-free: every fact kept
    assert out[1:].tolist() == graph[1:].tolist() and out[0].tolist() != graph[0].tolist()
    # keep_all: the earlier form, the failed query keeps every fact
    kept = retriever(tmp_path, encoder, llm=llm, failed_filter="keep_all").retrieve(questions, 5).indices
    assert kept.tolist() == graph.tolist()
    assert r.skipped["fact_filter"] == 1


def test_repeated_passages_are_one_node(tmp_path, encoder):
    ds = sample_dataset()
    questions = [q.question for q in ds.queries]
    base = retriever(tmp_path, encoder).retrieve(questions, 12).indices
    repeats = [Passage(f"{p.id}-again", p.title, p.text) for p in ds.corpus.passages[:2]]
    doc = json.loads(ds.openie_path.read_text())
    docs = doc["docs"] if isinstance(doc, dict) else doc
    openie = tmp_path / "openie.json"
    openie.write_text(json.dumps({"docs": docs + [dict(docs[0], idx=12), dict(docs[1], idx=13)]}))
    twice = replace(ds, name="sample-twice", corpus=Corpus(ds.corpus.passages + repeats), openie_path=openie)
    r = HippoRAG2Retriever(method_settings("hipporag2", index_root=str(tmp_path)), encoder=encoder, device="cpu")
    r.index(twice)
    assert r.graph.num_passages == 12 and r.passage_position.tolist() == list(range(12))
    assert r.retrieve(questions, 12).indices.tolist() == base.tolist()  # the repeats (12, 13) never returned
    split = HippoRAG2Retriever(method_settings("hipporag2", index_root=str(tmp_path), merge_duplicate_passages=False),
                               encoder=encoder, device="cpu")
    split.index(twice)
    assert split.graph.num_passages == 14
    assert split.retrieve(questions, 12).indices.tolist() != base.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reference_precision_keeps_the_sample_rankings(tmp_path, encoder, dtype):
    ds = sample_dataset()
    questions = [q.question for q in ds.queries]
    r32 = retriever(tmp_path, encoder)
    r = retriever(tmp_path, encoder, ppr_dtype=dtype, tol=1e-10)
    s32, s = (x.retrieve(questions, 12) for x in (r32, r))
    assert s.indices.tolist() == s32.indices.tolist()
    assert float((s.scores - s32.scores).abs().max()) < 2e-6


@pytest.mark.slow
def test_seed_rank_is_a_hipporag2_setting_that_matches_catrag_seeding(tmp_path, encoder):
    """Issue 47: ``seed_rank`` is HippoRAG 2's setting (default ``after_division``, the package's), so
    ``experiment=catrag_best``'s ``before_division`` seeding can be given to HippoRAG 2 as well: under it the
    one seed at ``link_top_k: 1`` is the entity of the best mean fact score, as CatRAG picks it."""
    from hyperrag.retrievers.catrag import CatRAGRetriever

    assert method_settings("hipporag2", index_root=str(tmp_path)).seed_rank == "after_division"
    q = ["Who was the husband of Marie Curie's elder daughter?"]
    hr = retriever(tmp_path, encoder, seed_rank="before_division", link_top_k=1)
    seeds = hr.seed(q)
    before = hr.entity_reset(seeds.fact_ids, seeds.fact_scores, seeds.keep)
    chosen = int(before[0].nonzero().squeeze())
    means: dict[int, list[float]] = {}
    for f, (s, o) in enumerate(hr.fact_entities[seeds.fact_ids[0]].tolist()):
        for e in (s, o):
            means.setdefault(e, []).append(float(seeds.fact_scores[0, f]))
    assert sum(means[chosen]) / len(means[chosen]) == pytest.approx(max(sum(v) / len(v) for v in means.values()))
    cat = CatRAGRetriever(method_settings("catrag", index_root=str(tmp_path), seed_rank="before_division",
                                          link_top_k=1), encoder=encoder, device="cpu")
    cat.index(sample_dataset())
    assert torch.equal(cat.entity_reset(seeds.fact_ids, seeds.fact_scores, seeds.keep), before)
    after = retriever(tmp_path, encoder, link_top_k=1)
    assert after.settings.seed_rank == "after_division" and after.describe()["seed_rank"] == "after_division"


def test_reference_seed_ties_warn_when_pythonhashseed_is_random(tmp_path, encoder, monkeypatch, caplog):
    """Issue 47: ``seed_ties: reference`` reproduces a Python set's order; with PYTHONHASHSEED unset the run
    warns (and ``describe()`` records the hash seed), with it set it does not."""
    import logging

    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    with caplog.at_level(logging.WARNING, logger="hyperrag.retrievers.hipporag2"):
        r = retriever(tmp_path, encoder, seed_ties="reference")
    assert "PYTHONHASHSEED" in caplog.text and r.describe()["python_hash_seed"] == "random"
    caplog.clear()
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    with caplog.at_level(logging.WARNING, logger="hyperrag.retrievers.hipporag2"):
        r = retriever(tmp_path, encoder, seed_ties="reference")
    assert "PYTHONHASHSEED" not in caplog.text and r.describe()["python_hash_seed"] == "0"
