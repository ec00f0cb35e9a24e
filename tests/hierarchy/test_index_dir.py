"""HugRAG over a knowledge-graph index directory that ``python -m hyperrag.index insert/delete`` changes: the
hierarchy follows the index locally (hyperrag.hierarchy.incremental.follow_index), summaries and gates are only
asked for changed modules, and a lost hierarchy falls back to a full build."""

from __future__ import annotations

import json
import logging
import shutil
import sys

import pytest

from hyperrag.config import method_settings
from hyperrag.data.jsonl import read_jsonl_corpus
from hyperrag.data.openie import read_openie
from hyperrag.data.types import Corpus, Dataset
from hyperrag.hierarchy.checkpoint import JsonlCheckpoint
from hyperrag.hierarchy.incremental import entity_signatures, match_modules, read_state, touched_by_signature
from hyperrag.hierarchy.store import entity_texts
from hyperrag.index.kg_index import build_kg_directory, graph_settings, load_kg_directory
from hyperrag.index.passages import dataset_for_index
from hyperrag.index.update import delete_documents, insert_documents
from hyperrag.retrievers.hugrag import HugRAGRetriever
from tests.conftest import REPO_ROOT
from tests.hierarchy.fake_llm import fake_llm, paper_figure, prompt_of, schema_text
from tests.reliability.doubles import HashEncoder
from tests.test_retrieve_index_dir import (
    NEW_PASSAGES,
    QUESTION,
    compose_retrieve,
    predictions,
    write_jsonl,
    write_new,
)

sys.path.insert(0, str(REPO_ROOT))
import retrieve

SAMPLE = REPO_ROOT / "hyperrag" / "sample_data"
HIER = {"backend": "cpu", "context_window": 40, "min_module_size": 3}


def build_index(tmp_path, encoder):
    index = tmp_path / "index"
    build_kg_directory(index, read_jsonl_corpus(SAMPLE / "corpus.jsonl"), SAMPLE / "openie_handwritten.json", encoder,
                       graph_settings())
    return index


def insert_new(tmp_path, index, encoder):
    corpus_path, openie_path = write_new(tmp_path)
    corpus = read_jsonl_corpus(corpus_path)
    insert_documents(index, corpus, read_openie(openie_path, corpus), encoder)


def index_dataset(index):
    return dataset_for_index(Dataset("s", Corpus([]), []), index)


def hugrag(index, encoder, llm=None, **kw):
    return HugRAGRetriever(method_settings("hugrag", hierarchy=HIER, **kw), encoder=encoder, llm=llm, device="cpu",
                           index_dir=str(index))


@pytest.mark.slow
def test_retrieve_follows_build_insert_delete(tmp_path, encoder):
    """retrieve.py method=hugrag index_dir=DIR after build, after an insert (the new passage answers a question
    about it) and after a delete (the deleted passage is never returned)."""
    index = build_index(tmp_path, encoder)
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    q_path = write_jsonl(tmp_path / "q.jsonl", queries)
    # the user's corpus file: every passage ever seen (the index decides which are retrieved)
    rows = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    full_corpus = write_jsonl(tmp_path / "full.jsonl", rows + NEW_PASSAGES)

    def run(out, qfile):
        cfg = compose_retrieve(tmp_path, "method=hugrag", f"index_dir={index}", "data=jsonl",
                               f"data.corpus={full_corpus}", f"data.queries={qfile}", out=out)
        metrics = retrieve.run(cfg)
        return metrics, predictions(tmp_path, out)

    m0, rows0 = run("r0", q_path)
    assert m0["recall@10"] == 100.0 and len(rows0) == len(queries)
    insert_new(tmp_path, index, encoder)
    q_new = write_jsonl(tmp_path / "q1.jsonl", [*queries, {"id": "qn", "question": QUESTION, "answers": ["Tromso"],
                                                           "gold_ids": ["n01", "n02"]}])
    m1, rows1 = run("r1", q_new)
    assert rows1["qn"]["ranked_ids"][0] in {"n01", "n02"} and "n01" in rows1["qn"]["ranked_ids"][:2]
    assert m1["queries"] == len(queries) + 1
    delete_documents(index, ["p07"])
    kept = [q for q in queries if "p07" not in q["gold_ids"]]
    _, rows2 = run("r2", write_jsonl(tmp_path / "q2.jsonl", kept))
    assert list(rows2) == [q["id"] for q in kept]
    for row in rows2.values():
        assert "p07" not in row["ranked_ids"] and len(set(row["ranked_ids"])) == len(row["ranked_ids"]) == 10
    state_files = list((index / "derived").glob("hugrag-*.json"))
    assert len(state_files) == 1
    state = read_state(state_files[0])
    assert state["kg_key"] == load_kg_directory(index).key and state["stats"]["hierarchy"] == "updated"
    # superseded hierarchy / dedup folders are removed: one of each is left
    assert len(list((index / "derived").glob("hugrag-hier-*"))) == 1
    assert len(list((index / "derived").glob("hugrag-dedup-*"))) <= 1


def test_signatures_touch_new_entities_and_neighbours_of_deleted(tmp_path):
    enc = HashEncoder()
    index = build_index(tmp_path, enc)
    g0 = load_kg_directory(index).graph
    s0 = entity_signatures(g0, entity_texts(g0))
    insert_new(tmp_path, index, enc)
    g1 = load_kg_directory(index).graph
    s1 = entity_signatures(g1, entity_texts(g1))
    touched = {g1.entity_names[e] for e in touched_by_signature(g0.entity_names, s0, g1.entity_names, s1).tolist()}
    assert set(g1.entity_names) - set(g0.entity_names) <= touched  # every new entity
    delete_documents(index, ["n02"])
    g2 = load_kg_directory(index).graph
    s2 = entity_signatures(g2, entity_texts(g2))
    touched2 = {g2.entity_names[e] for e in touched_by_signature(g1.entity_names, s1, g2.entity_names, s2).tolist()}
    gone = set(g1.entity_names) - set(g2.entity_names)
    assert gone
    ids1 = {n: i for i, n in enumerate(g1.entity_names)}
    nbrs = set()
    for u, v in g1.edge_index.T.tolist():
        for a, b in ((u, v), (v, u)):
            if a < g1.num_entities and b < g1.num_entities and g1.entity_names[a] in gone:
                nbrs.add(g1.entity_names[b])
    assert nbrs - gone and (nbrs - gone) <= touched2  # surviving neighbours of deleted entities
    assert touched2 <= set(g2.entity_names)  # only surviving entities are reported
    unchanged = {n for n in g2.entity_names if n in ids1} - touched2
    assert unchanged  # the rest is left alone


def _responder(body):
    spec = schema_text(body)
    if '"title"' in spec:  # module summary: depends on the prompt (its inputs) only
        first = prompt_of(body).split("\n")[1][:40]
        return json.dumps({"title": f"About {first}", "summary": f"Summary of {first}.", "keywords": ["k"]})
    if paper_figure(body) == "9":  # causal gate, Fig 9 as printed: the bare token
        return "yes"
    return json.dumps({"answer": "yes", "direction": "both"})  # causal gate


def _summary_requests(server, start=0):
    return [b for b in server.requests[start:] if '"title"' in schema_text(b)]


def test_update_asks_llm_only_for_changed_modules(tmp_path):
    enc = HashEncoder()
    index = build_index(tmp_path, enc)
    gates = {"top_m": 2, "threshold": 0.0}
    with fake_llm(_responder, tmp_path / "c0") as (llm, server):
        first = hugrag(index, enc, llm, gates=gates)
        first.index(index_dataset(index))
        assert first.describe()["hierarchy_status"]["hierarchy"] == "built"
        assert len(_summary_requests(server)) == first.tree.num_modules
    before = set(JsonlCheckpoint(first.hier.directory / "summaries.jsonl").by_digest())
    insert_new(tmp_path, index, enc)
    with fake_llm(_responder, tmp_path / "c1") as (llm, server):  # fresh LLM cache: the counts are real
        upd = hugrag(index, enc, llm, gates=gates)
        upd.index(index_dataset(index))
        status = upd.describe()["hierarchy_status"]
        asked = len(_summary_requests(server))
        gate_asked = len(server.requests) - asked
    assert status["hierarchy"] == "updated" and status["modules_kept"] > 0 and status["touched_entities"] > 0
    assert status["modules_kept"] + status["modules_recomputed"] == upd.tree.num_modules
    # a full build of the same updated graph (a copy of the index without its derived stages)
    full_index = tmp_path / "full"
    shutil.copytree(index, full_index, ignore=shutil.ignore_patterns("derived"))
    with fake_llm(_responder, tmp_path / "c2") as (llm, server):
        full = hugrag(full_index, enc, llm, gates=gates)
        full.index(index_dataset(full_index))
        assert full.describe()["hierarchy_status"]["hierarchy"] == "built"
        full_asked = len(_summary_requests(server))
        full_gate_asked = len(server.requests) - full_asked
    assert full_asked == full.tree.num_modules
    assert 0 < asked < full_asked
    tree = upd.tree
    assert upd.summary_stats["resumed"] == tree.num_modules - asked and upd.summary_stats["resumed"] > 0
    # summaries only for modules that are new, hold an entity whose text changed, or lie above such a module;
    # the kept ones come from the carried checkpoint
    records = JsonlCheckpoint(upd.hier.directory / "summaries.jsonl").by_digest()
    requested = {int(r["key"]) for d, r in records.items() if d not in before}
    assert len(requested) == asked
    match = match_modules(first.tree, first.graph.entity_names, tree, upd.graph.entity_names)
    old_text = dict(zip(first.graph.entity_names, first.hier.texts))
    changed_entity = [old_text.get(n) != t for n, t in zip(upd.graph.entity_names, upd.hier.texts)]
    changed = {m for m in range(tree.num_modules)
               if match[m] < 0 or any(changed_entity[e] for e in tree.entities(m).tolist())}
    allowed = set(changed)
    for m in changed:
        p = int(tree.parent[m])
        while p >= 0:
            allowed.add(p)
            p = int(tree.parent[p])
    assert requested <= allowed
    assert gate_asked <= full_gate_asked
    assert upd.gate_stats.get("resumed", 0) > 0 or full_gate_asked == 0
    # a rerun on the same index loads everything: no LLM request at all
    with fake_llm(_responder, tmp_path / "c3") as (llm, server):
        again = hugrag(index, enc, llm, gates=gates)
        again.index(index_dataset(index))
        assert again.describe()["hierarchy_status"]["hierarchy"] == "loaded" and not server.requests


def test_lost_hierarchy_falls_back_to_full_build(tmp_path, caplog):
    enc = HashEncoder()
    index = build_index(tmp_path, enc)
    first = hugrag(index, enc)
    first.index(index_dataset(index))
    old_dir = first.hier.directory
    insert_new(tmp_path, index, enc)
    shutil.rmtree(old_dir)  # the hierarchy the state points to is gone
    with caplog.at_level(logging.WARNING, logger="hyperrag.hierarchy.incremental"):
        ret = hugrag(index, enc)
        ret.index(index_dataset(index))
    status = ret.describe()["hierarchy_status"]
    assert status["hierarchy"] == "built" and status["modules_kept"] == 0
    assert any("gone or incomplete" in r.getMessage() and "from scratch" in r.getMessage() for r in caplog.records)
    out = ret.retrieve([QUESTION], 3)
    assert ret.graph.passage_ids[int(out.indices[0, 0])] in {"n01", "n02"}
    # a corrupt state record is ignored the same way (full build of the next update, no crash)
    state = next((index / "derived").glob("hugrag-*.json"))
    state.write_text("{not json", encoding="utf-8")
    delete_documents(index, ["n02"])
    again = hugrag(index, enc)
    again.index(index_dataset(index))
    assert again.describe()["hierarchy_status"]["hierarchy"] == "built"
    assert read_state(state)["kg_key"] == load_kg_directory(index).key


def test_index_dir_checks(tmp_path):
    from hyperrag.errors import InputError

    enc = HashEncoder()
    index = build_index(tmp_path, enc)
    raw = Dataset("s", read_jsonl_corpus(SAMPLE / "corpus.jsonl"), [])
    with pytest.raises(InputError, match="not this index's passages in index order"):
        hugrag(index, enc).index(Dataset("s", Corpus(list(reversed(raw.corpus.passages))), []))
    class Other(HashEncoder):
        model_key = "other"

    with pytest.raises(InputError, match="the index was embedded with"):
        hugrag(index, Other()).index(index_dataset(index))
