"""Index-directory insert/delete (generations, manifest history) and the ``python -m hyperrag.index`` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hyperrag.data import read_openie, sample_dataset
from hyperrag.data.openie import OpenIERecords
from hyperrag.data.types import Corpus, Dataset
from hyperrag.graph.build import build_knowledge_graph
from hyperrag.graph.canonical import graph_differences
from hyperrag.index.__main__ import main as cli_main
from hyperrag.index.kg_index import graph_settings, load_kg_directory, load_or_build_kg_index
from hyperrag.index.update import delete_documents, insert_documents
from hyperrag.llm.openie import write_openie
from tests.conftest import REPO_ROOT
from tests.reliability.doubles import HashEncoder

GRAPH = graph_settings()  # hydra_configs/graph/default.yaml


def split_sample(tmp_path, head: int = 8):
    ds = sample_dataset()
    openie = read_openie(ds.openie_path, ds.corpus)
    base = Corpus(ds.corpus.passages[:head], source="base")
    docs = json.loads(ds.openie_path.read_text())["docs"]
    base_openie = tmp_path / "base_openie.json"
    write_openie(base_openie, [{**d, "idx": i} for i, d in enumerate(docs[:head])])
    new = Corpus(ds.corpus.passages[head:], source="new")
    new_openie = OpenIERecords(openie.entities[head:], openie.triples[head:], 0, "new")
    return Dataset("base", base, [], base_openie), new, new_openie, docs


def test_insert_delete_directory_equals_full_build(tmp_path):
    enc = HashEncoder()
    base, new, new_openie, _ = split_sample(tmp_path)
    kg = load_or_build_kg_index(base, enc, GRAPH, root=tmp_path / "idx")
    before = enc.encoded_count
    res = insert_documents(kg.directory, new, new_openie, enc)
    assert enc.encoded_count - before == res.encoded < 100
    gone = ["p02", "p10"]
    delete_documents(kg.directory, gone)
    loaded = load_kg_directory(kg.directory)
    manifest = json.loads((kg.directory / "manifest.json").read_text())
    assert [u["op"] for u in manifest["updates"]] == ["insert", "delete"]
    assert sorted(p.name for p in kg.directory.iterdir()) == [".writer.lock", "gen-2", "manifest.json"]  # + the lock
    ds = sample_dataset()
    keep = [i for i, p in enumerate(ds.corpus.passages) if p.id not in gone]
    openie = read_openie(ds.openie_path, ds.corpus)
    ref, _ = build_knowledge_graph(Corpus([ds.corpus[i] for i in keep]),
                                   OpenIERecords([openie.entities[i] for i in keep], [openie.triples[i] for i in keep],
                                                 0, "x"), HashEncoder())
    assert graph_differences(loaded.graph, ref) == []


def test_crash_mid_update_keeps_previous_generation(tmp_path, monkeypatch):
    enc = HashEncoder()
    base, new, new_openie, _ = split_sample(tmp_path)
    kg = load_or_build_kg_index(base, enc, GRAPH, root=tmp_path / "idx")
    from hyperrag.index import update

    def boom(*args, **kwargs):
        raise KeyboardInterrupt  # stands in for a kill between writing files and the manifest

    monkeypatch.setattr(update.IndexDirectory, "write_manifest", boom)
    with pytest.raises(KeyboardInterrupt):
        insert_documents(kg.directory, new, new_openie, enc)
    monkeypatch.undo()
    assert load_kg_directory(kg.directory).graph.passage_ids == kg.graph.passage_ids  # still the old one
    insert_documents(kg.directory, new, new_openie, enc)  # the retry clears the half-written generation
    assert len(load_kg_directory(kg.directory).graph.passage_ids) == 12


def test_cli_delete_insert_verify_and_errors(tmp_path, encoder, monkeypatch, capsys):
    base, new, _, docs = split_sample(tmp_path)
    kg = load_or_build_kg_index(base, encoder, GRAPH, root=tmp_path / "idx")
    corpus = tmp_path / "new.jsonl"
    corpus.write_text("".join(json.dumps({"id": p.id, "title": p.title, "text": p.text}) + "\n" for p in new.passages))
    openie = tmp_path / "new_openie.json"
    write_openie(openie, [{**d, "idx": i} for i, d in enumerate(docs[8:])])
    monkeypatch.setenv("HYPERRAG_CACHE", str(encoder.cache.path.parent.parent))
    out = cli_main(["insert", "--index", str(kg.directory), "--corpus", str(corpus), "--openie", str(openie)])
    assert out["added_passages"] == 4 and out["touched_nodes"] > 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == out
    assert cli_main(["delete", "--index", str(kg.directory), "--ids", "p09"])["removed_passages"] == 1
    assert cli_main(["verify", "--index", str(kg.directory)])["ok"]
    for args, message in [
        (["delete", "--index", str(kg.directory), "--ids", "nope"], "not in the index"),
        (["insert", "--index", str(kg.directory), "--corpus", str(corpus), "--openie", str(openie)], "already"),
        (["verify", "--index", str(tmp_path / "missing")], "index directory not found"),
    ]:
        with pytest.raises(SystemExit) as info:
            cli_main(args)
        assert info.value.code == 2 and message in capsys.readouterr().err
    # a corrupted file: one line naming it and the stage, exit 2, from a real process
    gen = next(kg.directory.glob("gen-*"))
    (gen / "embeddings.pt").write_bytes(b"garbage")
    proc = subprocess.run([sys.executable, "-m", "hyperrag.index", "verify", "--index", str(kg.directory)],
                          check=False, capture_output=True, text=True, cwd=REPO_ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "embeddings.pt" in proc.stderr and "rerun stage 'embeddings'" in proc.stderr


def stored_passages(directory):
    from hyperrag.index.passages import index_passage_ids

    ids, passages, key = index_passage_ids(directory)
    assert passages is not None and [p.id for p in passages] == ids and key
    return passages


def test_passage_texts_follow_insert_and_delete(tmp_path):
    """The index stores its passages' texts in graph order; insert/delete keep them in step."""
    enc = HashEncoder()
    base, new, new_openie, _ = split_sample(tmp_path)
    kg = load_or_build_kg_index(base, enc, GRAPH, root=tmp_path / "idx")
    assert stored_passages(kg.directory) == base.corpus.passages
    insert_documents(kg.directory, new, new_openie, enc)
    delete_documents(kg.directory, ["p02", "p10"])
    ds = sample_dataset()
    expected = [p for p in ds.corpus.passages if p.id not in ("p02", "p10")]
    assert stored_passages(kg.directory) == expected
    assert load_kg_directory(kg.directory).graph.passage_ids == [p.id for p in expected]


def test_dataset_for_index_reorders_and_checks_gold_ids(tmp_path):
    from hyperrag.errors import InputError
    from hyperrag.index.passages import dataset_for_index

    enc = HashEncoder()
    base, new, new_openie, _ = split_sample(tmp_path)
    kg = load_or_build_kg_index(base, enc, GRAPH, root=tmp_path / "idx")
    insert_documents(kg.directory, new, new_openie, enc)
    delete_documents(kg.directory, ["p02"])
    ds = sample_dataset()
    ds.corpus = Corpus(list(reversed(ds.corpus.passages[:9])), source="partial")  # other order, lacks p10..p12
    with pytest.raises(InputError, match=r"gold passage id\(s\) \['p02'\] are not in the index"):
        dataset_for_index(ds, kg.directory)
    ds.queries = [q for q in ds.queries if "p02" not in q.gold_ids]
    aligned = dataset_for_index(ds, kg.directory)
    assert aligned.corpus.ids == load_kg_directory(kg.directory).graph.passage_ids
    assert aligned.corpus[aligned.corpus.position("p12")].text == new[new.position("p12")].text
    assert aligned.queries == ds.queries


def test_cli_build_refuses_to_overwrite_an_updated_index(tmp_path, monkeypatch, capsys):
    ds = sample_dataset()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": p.id, "title": p.title, "text": p.text}) + "\n"
                              for p in ds.corpus.passages))
    monkeypatch.setattr("hyperrag.embedding.encoder.TextEncoder", lambda *a, **k: HashEncoder())
    index = tmp_path / "idx"
    args = ["build", "--index", str(index), "--corpus", str(corpus), "--openie", str(ds.openie_path)]
    out = cli_main(args)
    assert out["built"] and out["passages"] == 12 and stored_passages(index)[0] == ds.corpus[0]
    assert not cli_main(args)["built"]  # same inputs: loaded, not rebuilt
    cli_main(["delete", "--index", str(index), "--ids", "p01"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        cli_main(args)
    assert info.value.code == 2 and "holds another index" in capsys.readouterr().err
