"""HyperRAG over a changing corpus: a saved ball is updated (delete + insert), not retrained, and follows an
index directory through ``python -m hyperrag.index build / insert / delete``."""

import dataclasses
import json

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data.types import Corpus, Passage
from tests.test_retrieve_index_dir import (
    NEW_OPENIE,
    NEW_PASSAGES,
    QUESTION,
    SAMPLE,
    compose_retrieve,
    index_cli,
    predictions,
    retrieve,
    write_jsonl,
)

SETTINGS = {"graph": "fused", "train": {"max_epochs": 3}, "update_epochs": 3,
            "model": {"anchor_weight": 20.0, "query_anchor_weight": 0.0, "lr": 0.005, "init_radius": 0.5}}
BAIKAL = Passage("n1", "Lake Baikal", "Lake Baikal is a rift lake in Siberia, the deepest lake in the world, "
                 "holding about a fifth of the fresh surface water on Earth.")
RAILWAY = Passage("n2", "Trans-Siberian Railway", "The Trans-Siberian Railway runs from Moscow to Vladivostok and "
                  "passes along the southern shore of Lake Baikal in Siberia.")


def _retriever(tmp_path, encoder, **kw):
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever

    settings = method_settings("hyperrag", models_dir=str(tmp_path / "models"), index_root=str(tmp_path / "index"),
                               **{**SETTINGS, **kw})
    return HyperRAGRetriever(settings, encoder=encoder, device="cpu")


def _with_corpus(ds, passages):
    return dataclasses.replace(ds, corpus=Corpus(list(passages)))


def _ranked(r, questions, k):
    return [[r.passage_ids[i] for i in row] for row in r.retrieve(questions, k).indices.tolist()]


def test_reuse_plan():
    from hyperrag.retrievers.hyperrag_update import reuse_plan

    saved = list("abcde")
    assert reuse_plan(saved, list("abcde")) == (5, [])
    assert reuse_plan(saved, list("abcdexy")) == (5, [])  # prefix
    assert reuse_plan(saved, list("acex")) == (3, [1, 3])  # b, d deleted; x appended
    assert reuse_plan(saved, list("ab")) == (2, [2, 3, 4])  # deletions only
    assert reuse_plan(saved, list("bad")) == (1, [0, 2, 3, 4])  # a reordered: appended again after b
    assert reuse_plan(saved, list("xab")) == (0, [0, 1, 2, 3, 4])


@pytest.fixture
def trained(tmp_path, encoder):
    from hyperrag.data import sample_dataset

    ds = sample_dataset()
    r = _retriever(tmp_path, encoder)
    r.index(ds)
    assert r.info["loaded_from"] == "trained" and r.info["trained_now"]
    return ds, r


def test_delete_and_insert_update_the_saved_ball(tmp_path, encoder, trained):
    ds, r = trained
    saved = {pid: r.model.points[i].detach().clone() for i, pid in enumerate(r.passage_ids)}
    changed = _with_corpus(ds, [p for p in ds.corpus.passages if p.id != "p07"] + [BAIKAL])
    r2 = _retriever(tmp_path, encoder)
    r2.index(changed)
    info = r2.describe()
    assert info["loaded_from"] == "updated" and not info["trained_now"]
    assert (info["reused_passages"], info["deleted_passages"], info["inserted_passages"]) == (11, 1, 1)
    assert info["checkpoint"].endswith("gen-1/model.ckpt")
    assert [u for op in info["updates"] for u in op] == ["delete", "insert"]
    assert r2.passage_ids == changed.corpus.ids
    assert r2.model.points.shape[0] == r2.graph.num_nodes == 12 + r2.graph.num_queries
    # every passage row the update did not train is bit-identical to the saved ball's
    assert "n1" in r2.updated_passage_ids and "p07" not in r2.updated_passage_ids
    untouched = [pid for pid in r2.passage_ids if pid in saved and pid not in r2.updated_passage_ids]
    assert untouched
    for pid in untouched:
        assert torch.equal(r2.model.points[r2.passage_ids.index(pid)], saved[pid]), pid
    # the new passage is found, the deleted one never returned (k = every passage)
    assert "n1" in _ranked(r2, ["What is the deepest lake in the world?"], 3)[0]
    for row in _ranked(r2, [q.question for q in ds.queries] + ["Which region is Le Havre in?"], 12):
        assert "p07" not in row and len(row) == 12
    # the generation is the ball of that corpus now: loaded as is
    r3 = _retriever(tmp_path, encoder)
    r3.index(changed)
    assert r3.info["loaded_from"] == "exact" and r3.info["checkpoint"] == info["checkpoint"]
    assert torch.equal(r3.model.points, r2.model.points)
    # grown again: gen-1 reuses 12 passages (a prefix), the base only 11 (p07 deleted) → gen-1 wins
    r4 = _retriever(tmp_path, encoder)
    r4.index(_with_corpus(ds, list(changed.corpus.passages) + [RAILWAY]))
    assert r4.info["loaded_from"] == "prefix" and r4.info["deleted_passages"] == 0
    assert r4.info["checkpoint"].endswith("gen-2/model.ckpt")


def test_min_reuse_falls_back_to_training(tmp_path, encoder, trained, caplog):
    ds, _ = trained
    changed = _with_corpus(ds, [p for p in ds.corpus.passages if p.id != "p07"] + [BAIKAL])
    r = _retriever(tmp_path, encoder, update={"min_reuse": 0.95})  # 11 / 12 reused < 95 %
    with caplog.at_level("WARNING", logger="hyperrag.retrievers.hyperrag"):
        r.index(changed)
    assert r.info["loaded_from"] == "trained" and r.info["trained_now"]
    refused = r.info["update_refused"]
    assert (refused["reused_passages"], refused["passages"], refused["min_reuse"]) == (11, 12, 0.95)
    assert "training from scratch instead" in caplog.text
    assert not list((tmp_path / "models" / "hyperrag").glob("*/gen-*"))  # nothing was updated
    assert r.passage_ids == changed.corpus.ids and "n1" in _ranked(r, ["deepest lake in the world"], 3)[0]
    with pytest.raises(ValueError, match="method.retriever.update.min_reuse: must be <= 1.0, got 1.5"):
        _retriever(tmp_path, encoder, update={"min_reuse": 1.5})


def _metrics(tmp_path, out):
    return json.loads((tmp_path / out / "metrics.json").read_text())


@pytest.mark.slow
def test_ball_follows_index_directory(tmp_path):
    """build → retrieve (trained) → insert → retrieve (prefix: new passages found) → delete → retrieve (updated:
    the deleted passage is never returned, nothing retrained)."""
    index = tmp_path / "index"
    assert index_cli(tmp_path, "build", "--index", str(index), "--corpus", str(SAMPLE / "corpus.jsonl"),
                     "--openie", str(SAMPLE / "openie_handwritten.json"))["passages"] == 12
    kept = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    kept = [q for q in kept if "p07" not in q["gold_ids"]]
    ask = {"id": "qn", "question": QUESTION, "answers": ["Tromso"]}
    before = write_jsonl(tmp_path / "q0.jsonl", [*kept, ask])  # same questions; n01 not indexed yet
    after = write_jsonl(tmp_path / "q1.jsonl", [*kept, {**ask, "gold_ids": ["n01", "n02"]}])
    corpus = write_jsonl(tmp_path / "all.jsonl", [json.loads(line) for line in
                                                   (SAMPLE / "corpus.jsonl").read_text().splitlines()]
                         + NEW_PASSAGES)
    over = ["method=hyperrag", f"index_dir={index}", "data=jsonl", f"data.corpus={corpus}",
            f"method.retriever.models_dir={tmp_path / 'models'}", "method.retriever.train.max_epochs=3",
            "method.retriever.update_epochs=3"]

    retrieve.run(compose_retrieve(tmp_path, *over, f"data.queries={before}", out="r0"))
    m0 = _metrics(tmp_path, "r0")
    assert m0["loaded_from"] == "trained" and m0["index_dir"] == str(index)

    new = write_jsonl(tmp_path / "new.jsonl", NEW_PASSAGES)
    docs = [{"idx": i, "title": p["title"], "passage": f"{p['title']}\n{p['text']}",
             "extracted_entities": o["entities"], "extracted_triples": o["triples"]}
            for i, (p, o) in enumerate(zip(NEW_PASSAGES, NEW_OPENIE))]
    (tmp_path / "new_openie.json").write_text(json.dumps({"docs": docs}), encoding="utf-8")
    index_cli(tmp_path, "insert", "--index", str(index), "--corpus", str(new), "--openie",
              str(tmp_path / "new_openie.json"))
    retrieve.run(compose_retrieve(tmp_path, *over, f"data.queries={after}", out="r1"))
    m1 = _metrics(tmp_path, "r1")
    assert m1["loaded_from"] == "prefix" and not m1["trained_now"] and m1["inserted_passages"] == 2
    rows = predictions(tmp_path, "r1")
    assert "n01" in rows["qn"]["ranked_ids"][:3]  # an inserted passage answers the new question

    index_cli(tmp_path, "delete", "--index", str(index), "--ids", "p07")
    retrieve.run(compose_retrieve(tmp_path, *over, f"data.queries={after}", out="r2"))
    m2 = _metrics(tmp_path, "r2")
    assert m2["loaded_from"] == "updated" and not m2["trained_now"]
    assert (m2["reused_passages"], m2["deleted_passages"], m2["inserted_passages"]) == (13, 1, 0)
    assert m2["checkpoint"].endswith("gen-2/model.ckpt")  # gen-1 (after insert) minus p07
    rows = predictions(tmp_path, "r2")
    assert list(rows) == [q["id"] for q in kept] + ["qn"]
    for row in rows.values():
        assert "p07" not in row["ranked_ids"] and len(set(row["ranked_ids"])) == 10
    assert "n01" in rows["qn"]["ranked_ids"][:3]
    assert len(list((tmp_path / "models" / "hyperrag").glob("*/model.ckpt"))) == 1  # one ball ever trained

    # a dataset that is not the index's passages in index order is refused before any work
    from hyperrag.data import jsonl_dataset
    from hyperrag.errors import InputError
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever

    raw = jsonl_dataset(corpus, after)
    with pytest.raises(InputError, match="not this index's passages in index order"):
        settings = method_settings("hyperrag", models_dir=str(tmp_path / "models"), **SETTINGS)
        HyperRAGRetriever(settings, encoder=None, index_dir=str(index), device="cpu").index(raw)


def test_build_retriever_accepts_index_dir(tmp_path):
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever
    from hyperrag.runners.prepare import build_retriever

    r = build_retriever(method_settings("hyperrag"), None, None, tmp_path, device="cpu")
    assert isinstance(r, HyperRAGRetriever) and r.index_dir == str(tmp_path) and r.supports_index_dir
