"""retrieve.py method=cdfrag over an index directory built, then updated, with ``python -m hyperrag.index``.

The causal graph follows the index: its OpenIE triples come from the index's provenance, inserted passages are
found and mined (only they: the causal index reuses the records of the others), deleted ones never come back.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
import retrieve

SAMPLE = REPO_ROOT / "hyperrag" / "sample_data"
NEW_PASSAGES = [
    {
        "id": "n01",
        "title": "Zorblax Quintessa",
        "text": "Zorblax Quintessa is a glass harmonica maker who was born in Tromso in 1931. A fire in his workshop "
        "led to the loss of his first harmonicas.",
    },
    {
        "id": "n02",
        "title": "Tromso",
        "text": "Tromso is a city in northern Norway, known for the Arctic Cathedral. The midnight sun caused a tourism "
        "boom in the city.",
    },
]
NEW_OPENIE = [
    {
        "entities": [
            "Zorblax Quintessa",
            "glass harmonica maker",
            "Tromso",
            "fire",
            "loss of his first harmonicas",
        ],
        "triples": [
            ["Zorblax Quintessa", "is", "glass harmonica maker"],
            ["Zorblax Quintessa", "born in", "Tromso"],
            ["fire", "led to", "loss of his first harmonicas"],
        ],
    },
    {
        "entities": ["Tromso", "northern Norway", "Arctic Cathedral", "midnight sun", "tourism boom"],
        "triples": [
            ["Tromso", "is a city in", "northern Norway"],
            ["Tromso", "known for", "Arctic Cathedral"],
            ["midnight sun", "caused", "tourism boom"],
        ],
    },
]
QUESTION = "Where was the glass harmonica maker Zorblax Quintessa born?"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def index_cli(tmp: Path, *args: str) -> dict:
    env = {**os.environ, "HYPERRAG_CACHE": str(tmp / "cache"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "hyperrag.index", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def retrieve_cdfrag(
    tmp: Path, index: Path, corpus: Path, queries: Path, out: str
) -> tuple[dict, dict[str, dict]]:
    """One ``retrieve.py method=cdfrag llm=none index_dir=...`` run; returns (metrics.json, rows by query id)."""
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        cfg = compose(
            "retrieve",
            overrides=[
                f"out={tmp / out}",
                f"cache_dir={tmp / 'cache'}",
                "hardware=cpu",
                "llm=none",
                "tracking=none",
                "method=cdfrag",
                "method.retriever.classifier=null",
                "method.retriever.policy=null",
                f"index_dir={index}",
                "data=jsonl",
                f"data.corpus={corpus}",
                f"data.queries={queries}",
            ],
        )
    retrieve.run(cfg)
    rows = [json.loads(line) for line in (tmp / out / "predictions.jsonl").read_text().splitlines()]
    return json.loads((tmp / out / "metrics.json").read_text()), {r["id"]: r for r in rows}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Build the sample index → retrieve → insert n01, n02 → retrieve → delete p07, n02 → retrieve."""
    tmp = tmp_path_factory.mktemp("cdfrag_idx")
    index = tmp / "index"
    assert (
        index_cli(
            tmp,
            "build",
            "--index",
            str(index),
            "--corpus",
            str(SAMPLE / "corpus.jsonl"),
            "--openie",
            str(SAMPLE / "openie_handwritten.json"),
        )["passages"]
        == 12
    )
    corpus_rows = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    full_corpus = write_jsonl(tmp / "full.jsonl", list(reversed(corpus_rows + NEW_PASSAGES)))
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    kept = [q for q in queries if "p07" not in q["gold_ids"]]
    before = write_jsonl(tmp / "q_before.jsonl", kept)
    after = write_jsonl(
        tmp / "q_after.jsonl",
        [*kept, {"id": "qn", "question": QUESTION, "answers": ["Tromso"], "gold_ids": ["n01"]}],
    )
    runs = {"built": retrieve_cdfrag(tmp, index, full_corpus, before, "run_built")}
    new = write_jsonl(tmp / "new.jsonl", NEW_PASSAGES)
    docs = [
        {
            "idx": i,
            "title": p["title"],
            "passage": f"{p['title']}\n{p['text']}",
            "extracted_entities": o["entities"],
            "extracted_triples": o["triples"],
        }
        for i, (p, o) in enumerate(zip(NEW_PASSAGES, NEW_OPENIE))
    ]
    (tmp / "new_openie.json").write_text(json.dumps({"docs": docs}), encoding="utf-8")
    assert (
        index_cli(
            tmp,
            "insert",
            "--index",
            str(index),
            "--corpus",
            str(new),
            "--openie",
            str(tmp / "new_openie.json"),
        )["added_passages"]
        == 2
    )
    runs["inserted"] = retrieve_cdfrag(tmp, index, full_corpus, after, "run_inserted")
    index_cli(tmp, "delete", "--index", str(index), "--ids", "p07", "n02")
    runs["deleted"] = retrieve_cdfrag(tmp, index, full_corpus, after, "run_deleted")
    return {"index": index, "runs": runs, "kept": kept}


def causal_graph_of(metrics: dict):
    from hyperrag.causal.graph import CausalGraph

    return CausalGraph.load(metrics["causal_index_dir"])


@pytest.mark.slow
def test_cdfrag_follows_insert_and_delete(history):
    runs = history["runs"]
    built, _ = runs["built"]
    assert built["method"] == "cdfrag" and built["index_dir"] == str(history["index"])
    assert built["causal_graph"]["passages_computed"] == 12 and built["causal_graph"]["base_index"] is None

    inserted, rows = runs["inserted"]
    stats = inserted["causal_graph"]
    assert stats["passages_reused"] == 12 and stats["passages_computed"] == 2  # only the new passages mined
    assert stats["base_index"] == Path(built["causal_index_dir"]).name
    assert "n01" in rows["qn"]["ranked_ids"][:2]  # the inserted passage answers the new question
    graph = causal_graph_of(inserted)
    by_passage = {info["passage_id"] for info in graph.edge_info}
    assert {"n01", "n02"} <= by_passage  # causal edges mined from the inserted passages...
    sources = {(info["passage_id"], info["source"]) for info in graph.edge_info}
    assert ("n01", "openie") in sources  # ...also from their OpenIE triples, read back from the index
    assert graph.passage_ids[-2:] == ["n01", "n02"]

    deleted, rows = runs["deleted"]
    stats = deleted["causal_graph"]
    assert stats["passages_reused"] == 12 and stats["passages_computed"] == 0
    assert stats["base_index"] == Path(inserted["causal_index_dir"]).name
    assert list(rows) == [q["id"] for q in history["kept"]] + ["qn"]
    for row in rows.values():
        assert not {"p07", "n02"} & set(row["ranked_ids"])  # deleted: never returned
        assert len(row["ranked_ids"]) == 10
    assert "n01" in rows["qn"]["ranked_ids"][:2]
    graph = causal_graph_of(deleted)
    assert "n02" not in {info["passage_id"] for info in graph.edge_info} and "n02" not in graph.passage_ids
    assert all(
        graph.passage_ids[int(p)] == info["passage_id"]
        for p, info in zip(graph.edge_passage, graph.edge_info)
    )


@pytest.mark.slow  # the default run stays under 10 minutes on 2 cores (BENCHMARKS, test suite)
def test_passage_triples_follow_the_index(history):
    """The triples the causal graph reads from the index are the canonical triples each passage was indexed with."""
    from hyperrag.graph.build import canonical_triples
    from hyperrag.graph.provenance import passage_triples
    from hyperrag.index.kg_index import load_kg_directory

    kg = load_kg_directory(history["index"])
    raw = json.loads((SAMPLE / "openie_handwritten.json").read_text())
    docs = raw["docs"] if isinstance(raw, dict) else raw
    ids = [json.loads(line)["id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    original = {pid: [tuple(t) for t in d["extracted_triples"]] for pid, d in zip(ids, docs)}
    original.update({p["id"]: [tuple(t) for t in o["triples"]] for p, o in zip(NEW_PASSAGES, NEW_OPENIE)})
    triples = passage_triples(kg.graph, kg.provenance)
    assert len(triples) == kg.graph.num_passages == 12
    for pid, got in zip(kg.graph.passage_ids, triples):
        assert got == canonical_triples(original[pid]), pid
    assert any(len(t) > 1 for t in triples)


@pytest.mark.slow  # the default run stays under 10 minutes on 2 cores (BENCHMARKS, test suite)
def test_index_without_provenance_is_a_clear_error(history, tmp_path):
    """An index that cannot say which triples its passages have is refused with a one-line reason."""
    import shutil

    from hyperrag.config import method_settings
    from hyperrag.data.types import Corpus, Dataset, Passage
    from hyperrag.errors import InputError
    from hyperrag.index.passages import graph_folder
    from hyperrag.index.store import IndexDirectory
    from hyperrag.retrievers.cdfrag import CDFRAGRetriever
    from tests.reliability.doubles import HashEncoder

    copy = tmp_path / "index"
    shutil.copytree(history["index"], copy)
    directory = IndexDirectory(copy)
    manifest = directory.manifest()
    folder = graph_folder(directory, manifest)
    (folder / "provenance.pt").unlink()
    rel = str((folder / "provenance.pt").relative_to(copy))
    files = {name: entry["stage"] for name, entry in manifest["files"].items() if name != rel}
    directory.write_manifest(
        manifest["key"], manifest["settings"], manifest["inputs"], files, manifest["stats"]
    )
    rows = {p["id"]: p for p in NEW_PASSAGES}
    rows.update(
        {
            json.loads(line)["id"]: json.loads(line)
            for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()
        }
    )
    from hyperrag.index.passages import index_passage_ids

    ids, _, _ = index_passage_ids(copy)
    ds = Dataset("sample", Corpus([Passage(i, rows[i]["title"], rows[i]["text"]) for i in ids]), [])
    class IndexEmbedder(HashEncoder):  # the embedder identity the index was built with (no model needed)
        model_key = manifest["inputs"]["encoder"]

    retriever = CDFRAGRetriever(
        method_settings("cdfrag", classifier=None, policy=None, index_root=str(tmp_path / "causal")),
        encoder=IndexEmbedder(),
        index_dir=str(copy),
        device="cpu",
    )
    with pytest.raises(InputError, match="has no provenance.pt"):
        retriever.index(ds)
