"""Incremental causal index: records of unchanged passages are reused, and the result is the full rebuild's graph."""

import json
import math
import re
from dataclasses import replace

import pytest
import torch

import hyperrag.causal.graph as causal_graph
import hyperrag.causal.records as causal_records
from hyperrag.causal.candidates import extract_candidates
from hyperrag.causal.graph import (
    CausalGraph,
    build_causal_graph,
    load_or_build_causal_index,
)
from hyperrag.causal.records import RECORDS_FILE, load_records
from hyperrag.config import method_settings
from hyperrag.data.types import Corpus, Dataset, Passage
from hyperrag.index.store import IndexDirectory
from hyperrag.utils.hashing import stable_digest
from tests.causal.corpus import OPENIE, PASSAGES
from tests.causal.llm_double import fake_llm, task_of, user_text
from tests.llm.fake_server import FakeOpenAIServer

CAUSAL = method_settings("cdfrag").causal

ROWS = {pid: (title, text, triples) for (pid, title, text), triples in zip(PASSAGES, OPENIE)}
ROWS["c12"] = (
    "Harbour strike",
    "A strike by dock workers closed the harbour of Maren in 2010. The closure led to a shortage of grain in the town.",
    [["closure", "led to", "shortage of grain"]],
)
ROWS["c13"] = (
    "Grain prices",
    "Grain prices rose sharply because of the shortage of grain. The council opened an emergency store.",
    [["shortage of grain", "caused", "Grain prices rose sharply"]],
)
BASE = [f"c{i:02d}" for i in range(10)]
INSERTED = ["c10", "c11", "c12", "c13"]
VOLATILE = ("seconds", "passages_reused", "passages_computed", "pairs_scored", "llm_asked", "base_index")


def dataset(tmp_path, ids, edits=None, name="toy"):
    """A dataset of the given passages (``edits``: id → new text) with its own OpenIE file."""
    passages, docs = [], []
    for i, pid in enumerate(ids):
        title, text, triples = ROWS[pid]
        text = (edits or {}).get(pid, text)
        passages.append(Passage(pid, title, text))
        docs.append(
            {"idx": i, "passage": f"{title}\n{text}", "extracted_entities": [], "extracted_triples": triples}
        )
    path = tmp_path / f"openie-{stable_digest(docs)[:12]}.json"
    path.write_text(json.dumps({"docs": docs}))
    return Dataset(name, Corpus(passages), [], path)


def same_value(a, b, tol):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], tol) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, abs_tol=tol)
    return a == b


def assert_same_graph(a: CausalGraph, b: CausalGraph, tol: float = 0.0) -> None:
    assert a.node_names == b.node_names
    assert a.passage_ids == b.passage_ids
    assert torch.equal(a.edge_index, b.edge_index)
    assert torch.equal(a.edge_passage, b.edge_passage)
    assert torch.allclose(a.edge_weight, b.edge_weight, atol=tol, rtol=0)
    assert len(a.edge_info) == len(b.edge_info)
    assert all(same_value(x, y, tol) for x, y in zip(a.edge_info, b.edge_info))
    assert torch.equal(a.alias_index, b.alias_index)
    assert torch.allclose(a.alias_weight, b.alias_weight, atol=1e-5)
    assert torch.allclose(a.node_emb, b.node_emb, atol=1e-5)
    assert {k: v for k, v in a.stats.items() if k not in VOLATILE} == {
        k: v for k, v in b.stats.items() if k not in VOLATILE
    }


def insert_then_delete(tmp_path, encoder, settings, **kw):
    """Base corpus → insert 4 passages → delete 2 and edit 1; returns the three indexes and the final dataset."""
    root = tmp_path / "idx"
    base = load_or_build_causal_index(dataset(tmp_path, BASE), encoder, settings, root=root, **kw)
    grown = load_or_build_causal_index(dataset(tmp_path, BASE + INSERTED), encoder, settings, root=root, **kw)
    final_ids = [p for p in BASE + INSERTED if p not in ("c02", "c04")]
    final_ds = dataset(
        tmp_path, final_ids, edits={"c06": ROWS["c06"][1] + " The repair was due to public pressure."}
    )
    final = load_or_build_causal_index(final_ds, encoder, settings, root=root, **kw)
    return base, grown, final, final_ds


def test_insert_then_delete_equals_full_rebuild(tmp_path, encoder):
    settings = replace(CAUSAL, 
        weak_prior=0.5
    )  # rule priors: strong, weak and OpenIE candidates all enter
    base, grown, final, final_ds = insert_then_delete(tmp_path, encoder, settings)
    assert base.built and base.base is None and base.graph.stats["passages_computed"] == 10
    assert grown.base == base.directory
    assert grown.graph.stats["passages_reused"] == 10 and grown.graph.stats["passages_computed"] == 4
    assert final.base == grown.directory and final.graph.stats["base_index"] == grown.directory.name
    assert (
        final.graph.stats["passages_reused"] == 11 and final.graph.stats["passages_computed"] == 1
    )  # c06 edited
    g = final.graph
    assert {"c02", "c04"}.isdisjoint(info["passage_id"] for info in g.edge_info)
    assert any(info["passage_id"] == "c12" for info in g.edge_info)  # an inserted passage's edges
    assert any("public pressure" in info["sentence"] for info in g.edge_info)  # the edited passage's new edge
    assert {"openie", "strong", "weak"} <= {info["strength"] for info in g.edge_info}

    full = load_or_build_causal_index(final_ds, encoder, settings, root=tmp_path / "fresh")
    assert full.built and full.base is None and full.graph.stats["passages_computed"] == len(final_ds.corpus)
    assert_same_graph(g, full.graph)
    assert_same_graph(CausalGraph.load(final.directory), full.graph)  # what is on disk too
    assert_same_graph(
        g, build_causal_graph(final_ds, encoder, settings, openie_triples=read_triples(final_ds))
    )

    # the same passages in another order: every record reused, the graph follows the new order
    shuffled = dataset(
        tmp_path,
        list(reversed(final_ds.corpus.ids)),
        edits={"c06": final_ds.corpus[final_ds.corpus.position("c06")].text},
    )
    again = load_or_build_causal_index(shuffled, encoder, settings, root=tmp_path / "idx")
    assert (
        again.graph.stats["passages_reused"] == len(shuffled.corpus)
        and again.graph.stats["passages_computed"] == 0
    )
    assert_same_graph(
        again.graph, load_or_build_causal_index(shuffled, encoder, settings, root=tmp_path / "fresh2").graph
    )
    # the records file is in the manifest with its checksum; older indexes of the family are pruned (keep=3)
    manifest = IndexDirectory(again.directory).verify()
    assert RECORDS_FILE in manifest["files"] and manifest["files"][RECORDS_FILE]["sha256"]
    assert len(load_records(again.directory)) == len(shuffled.corpus)
    assert not base.directory.exists() and grown.directory.exists()


def read_triples(ds):
    from hyperrag.data.openie import read_openie

    return read_openie(ds.openie_path, ds.corpus).triples


class CountingClassifier:
    """TEST DOUBLE for the pair classifier: content-based probabilities, every text it was asked about recorded."""

    def __init__(self):
        self.texts: list[str] = []

    def predict_proba(self, texts, batch_size=64):
        self.texts.extend(texts)
        return torch.tensor([0.3 + 0.6 * (int(stable_digest(t)[:4], 16) / 0xFFFF) for t in texts])


def test_only_new_passages_are_extracted_and_scored(tmp_path, encoder, monkeypatch):
    extracted: list[list[str]] = []
    real_extract = causal_records.extract_candidates

    def counting_extract(corpus, *args, **kw):
        extracted.append(corpus.ids)
        return real_extract(corpus, *args, **kw)

    clf = CountingClassifier()
    loads = []
    monkeypatch.setattr(causal_records, "extract_candidates", counting_extract)
    monkeypatch.setattr(causal_graph, "load_pair_classifier", lambda path: loads.append(path) or clf)
    ckpt = tmp_path / "pair.ckpt"
    ckpt.write_bytes(b"test double checkpoint")
    settings = CAUSAL
    kw = {"classifier_path": ckpt, "root": tmp_path / "idx"}
    base = load_or_build_causal_index(dataset(tmp_path, BASE), encoder, settings, **kw)
    assert extracted == [BASE] and len(loads) == 1
    asked_before = len(clf.texts)
    grown_ds = dataset(tmp_path, BASE + ["c12", "c13"])
    grown = load_or_build_causal_index(grown_ds, encoder, settings, **kw)
    assert extracted[1:] == [["c12", "c13"]]  # only the new passages are mined
    new_pairs = extract_candidates(
        Corpus(grown_ds.corpus.passages[-2:]), [ROWS["c12"][2], ROWS["c13"][2]]
    ).pairs
    expected = CountingClassifier()
    causal_records.score_candidates(new_pairs, expected, settings)
    assert (
        len(new_pairs) >= 3 and clf.texts[asked_before:] == expected.texts
    )  # exactly the new pairs, both orders
    assert grown.graph.stats["pairs_scored"] == len(new_pairs) and grown.graph.stats["classifier"] is True
    full = load_or_build_causal_index(
        grown_ds, encoder, settings, classifier_path=ckpt, root=tmp_path / "fresh"
    )
    assert_same_graph(grown.graph, full.graph)
    assert any(info.get("reverse") for info in full.graph.edge_info)  # the double reorients some pairs

    # a delete-only update computes nothing: no extraction, and the classifier is not even loaded
    loads_before = len(loads)
    shrunk = load_or_build_causal_index(
        dataset(tmp_path, BASE[:-1] + ["c12", "c13"]), encoder, settings, **kw
    )
    assert shrunk.graph.stats["passages_computed"] == 0 and len(loads) == loads_before
    assert len(extracted) == 3  # base, grown, fresh full build
    assert base.directory != grown.directory != shrunk.directory


def test_llm_is_asked_only_about_new_pairs(tmp_path, encoder):
    asked: list[str] = []

    def verifier(body: dict) -> str:
        assert task_of(body) == "causal_pair_verification"
        asked.append(re.search(r'<node id="C">\n(.*?)\n</node>', user_text(body), re.DOTALL).group(1))
        return json.dumps({"correct": True, "direction": "as_given", "refined": "r", "justification": "j",
                           "confidence": "Medium"})

    settings = replace(CAUSAL, use_openie=False, verify_max_pairs=3)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with FakeOpenAIServer(responder=verifier) as server:
        with fake_llm(server, tmp_path / "a") as llm:
            base = load_or_build_causal_index(
                dataset(tmp_path, BASE), encoder, settings, llm=llm, root=tmp_path / "idx"
            )
        assert len(asked) == 3 and base.graph.stats["llm_verified"] == 3  # the cap over the base corpus
        asked.clear()
        # a fresh LLM cache: a question about an old pair would reach the server
        with fake_llm(server, tmp_path / "b") as llm:
            grown = load_or_build_causal_index(
                dataset(tmp_path, BASE + ["c12", "c13"]), encoder, settings, llm=llm, root=tmp_path / "idx"
            )
    new_texts = ROWS["c12"][1] + " " + ROWS["c13"][1]
    assert len(asked) == 2 and all(a in new_texts for a in asked)  # the cap applies to the new pairs
    assert grown.graph.stats["llm_asked"] == 2 and grown.graph.stats["llm_verified"] == 5
    assert grown.graph.stats["passages_reused"] == 10
    verified = [info for info in grown.graph.edge_info if "llm" in info]
    assert {info["passage_id"] for info in verified} >= {"c12", "c13"} and len(verified) == 5
    assert all(math.isclose(info["score"], 1.0) for info in verified)
    w = {
        grown.graph.edge_info[e]["passage_id"]: float(grown.graph.edge_weight[e])
        for e in range(grown.graph.num_edges)
        if "llm" in grown.graph.edge_info[e]
    }
    assert w["c12"] == pytest.approx(5 / 6)  # (1 + 2/3) / 2 (Medium)


def test_random_pair_classifier_insert_delete_equals_full(tmp_path, encoder, monkeypatch):
    """The real classifier (random head, biased to accept): batches differ between builds, scores barely."""
    from hyperrag.causal.classifier import CausalPairClassifier
    from hyperrag.config import task_arguments

    torch.manual_seed(0)
    model = CausalPairClassifier(**task_arguments("causal_pair", max_length=64))
    with torch.no_grad():
        model.head[-1].bias.fill_(3.0)
    monkeypatch.setattr(causal_graph, "load_pair_classifier", lambda path: model)
    ckpt = tmp_path / "pair.ckpt"
    ckpt.write_bytes(b"random classifier")
    settings = CAUSAL
    _, _, final, final_ds = insert_then_delete(tmp_path, encoder, settings, classifier_path=ckpt)
    assert final.graph.stats["passages_computed"] == 1 and final.graph.num_edges > 10
    full = load_or_build_causal_index(
        final_ds, encoder, settings, classifier_path=ckpt, root=tmp_path / "fresh"
    )
    assert full.graph.stats["passages_computed"] == len(final_ds.corpus)
    assert_same_graph(final.graph, full.graph, tol=2e-4)


def test_damaged_base_is_not_reused(tmp_path, encoder, caplog):
    settings = CAUSAL
    base = load_or_build_causal_index(dataset(tmp_path, BASE), encoder, settings, root=tmp_path / "idx")
    with open(base.directory / RECORDS_FILE, "a", encoding="utf-8") as handle:
        handle.write("{}\n")
    grown = load_or_build_causal_index(
        dataset(tmp_path, BASE + ["c12"]), encoder, settings, root=tmp_path / "idx"
    )
    assert grown.base is None and grown.graph.stats["passages_computed"] == 11
    assert "not reused" in caplog.text and RECORDS_FILE in caplog.text
    # a different family (other settings) is never a base
    other = load_or_build_causal_index(
        dataset(tmp_path, BASE + ["c12"]), encoder, replace(CAUSAL, weak_prior=0.5), root=tmp_path / "idx"
    )
    assert other.base is None and other.graph.stats["passages_reused"] == 0
