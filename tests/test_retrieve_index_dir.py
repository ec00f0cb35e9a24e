"""retrieve.py over an index directory built, then updated, with ``python -m hyperrag.index``; and resume.

The index's passages (not the corpus file's) are what gets ranked: inserted passages are found, deleted
ones never come back, and gold ids must name indexed passages.
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
    {"id": "n01", "title": "Zorblax Quintessa",
     "text": "Zorblax Quintessa is a glass harmonica maker who was born in Tromso in 1931."},
    {"id": "n02", "title": "Tromso",
     "text": "Tromso is a city in northern Norway, known for the Arctic Cathedral and the midnight sun."},
]
NEW_OPENIE = [
    {"entities": ["Zorblax Quintessa", "glass harmonica maker", "Tromso", "1931"],
     "triples": [["Zorblax Quintessa", "is", "glass harmonica maker"], ["Zorblax Quintessa", "born in", "Tromso"],
                 ["Zorblax Quintessa", "born in", "1931"]]},
    {"entities": ["Tromso", "northern Norway", "Arctic Cathedral", "midnight sun"],
     "triples": [["Tromso", "is a city in", "northern Norway"], ["Tromso", "known for", "Arctic Cathedral"],
                 ["Tromso", "known for", "midnight sun"]]},
]
QUESTION = "Where was the glass harmonica maker Zorblax Quintessa born?"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_new(folder: Path, passages: list[dict] = NEW_PASSAGES, openie: list[dict] = NEW_OPENIE) -> tuple[Path, Path]:
    """``folder/new.jsonl`` and its HippoRAG-format ``folder/new_openie.json`` (``docs[i]`` ↔ ``passages[i]``)."""
    corpus = write_jsonl(folder / "new.jsonl", passages)
    docs = [{"idx": i, "title": p["title"], "passage": f"{p['title']}\n{p['text']}",
             "extracted_entities": o["entities"], "extracted_triples": o["triples"]}
            for i, (p, o) in enumerate(zip(passages, openie))]
    path = folder / "new_openie.json"
    path.write_text(json.dumps({"docs": docs}), encoding="utf-8")
    return corpus, path


def index_cli(tmp_path: Path, *args: str) -> dict:
    env = {**os.environ, "HYPERRAG_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "hyperrag.index", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compose_retrieve(tmp_path: Path, *overrides: str, out: str = "run"):
    with initialize_config_dir(config_dir=str(REPO_ROOT / "hydra_configs"), version_base="1.3"):
        return compose("retrieve", overrides=[f"out={tmp_path / out}", f"cache_dir={tmp_path / 'cache'}",
                                              "hardware=cpu", "llm=none", "tracking=none", *overrides])


def predictions(tmp_path: Path, out: str = "run") -> dict[str, dict]:
    rows = [json.loads(line) for line in (tmp_path / out / "predictions.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


@pytest.fixture(scope="module")
def updated_index(tmp_path_factory):
    """The sample corpus indexed with the CLI, two new passages inserted, then p07 deleted."""
    tmp = tmp_path_factory.mktemp("idx")
    index = tmp / "index"
    built = index_cli(tmp, "build", "--index", str(index), "--corpus", str(SAMPLE / "corpus.jsonl"),
                      "--openie", str(SAMPLE / "openie_handwritten.json"))
    assert built["built"] and built["passages"] == 12
    new, new_openie = write_new(tmp)
    inserted = index_cli(tmp, "insert", "--index", str(index), "--corpus", str(new), "--openie", str(new_openie))
    assert inserted["added_passages"] == 2
    index_cli(tmp, "delete", "--index", str(index), "--ids", "p07")
    assert index_cli(tmp, "verify", "--index", str(index))["ok"]
    queries = [json.loads(line) for line in (SAMPLE / "queries.jsonl").read_text().splitlines()]
    # the sample questions whose gold passages survive, plus one about an inserted passage
    kept = [q for q in queries if "p07" not in q["gold_ids"]]
    assert len(kept) < len(queries)
    corpus_rows = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    return {"index": index, "tmp": tmp, "kept": kept,
            # the user's corpus file: every passage ever seen, in another order than the index's
            "full_corpus": write_jsonl(tmp / "full.jsonl", list(reversed(corpus_rows + NEW_PASSAGES))),
            "queries": write_jsonl(tmp / "queries.jsonl",
                                   [*kept, {"id": "qn", "question": QUESTION, "answers": ["Tromso"],
                                            "gold_ids": ["n01", "n02"]}])}


@pytest.mark.slow
@pytest.mark.parametrize("method", ["hipporag2", "dense", "bm25", "catrag"])
def test_retrieve_over_updated_index(tmp_path, updated_index, method):
    u = updated_index
    cfg = compose_retrieve(tmp_path, f"method={method}", f"index_dir={u['index']}", "data=jsonl",
                           f"data.corpus={u['full_corpus']}", f"data.queries={u['queries']}")
    metrics = retrieve.run(cfg)
    rows = predictions(tmp_path)
    assert list(rows) == [q["id"] for q in u["kept"]] + ["qn"]
    assert rows["qn"]["ranked_ids"][0] in {"n01", "n02"}  # an inserted passage answers the new question
    assert "n01" in rows["qn"]["ranked_ids"][:2]
    for row in rows.values():
        assert "p07" not in row["ranked_ids"]  # deleted: never returned
        assert len(row["ranked_ids"]) == 10 and len(set(row["ranked_ids"])) == 10
    assert metrics["queries"] == len(rows)
    if method in ("hipporag2", "catrag"):
        assert json.loads((tmp_path / "run" / "metrics.json").read_text())["index_dir"] == str(u["index"])


@pytest.mark.slow  # the module's updated_index fixture builds and updates an index (~50 s on 2 cores)
def test_index_passages_not_in_corpus_file(tmp_path, updated_index):
    """The corpus file may lack inserted passages: their texts come from the index."""
    u = updated_index
    queries = write_jsonl(tmp_path / "q.jsonl", [{"id": "qn", "question": QUESTION, "gold_ids": ["p01"]}])
    cfg = compose_retrieve(tmp_path, "method=bm25", f"index_dir={u['index']}", "data=jsonl",
                           f"data.corpus={SAMPLE / 'corpus.jsonl'}", f"data.queries={queries}")
    retrieve.run(cfg)
    ranked = predictions(tmp_path)["qn"]["ranked_ids"]
    assert ranked[0] == "n01" and "p07" not in ranked


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO_ROOT / "retrieve.py"), f"out={tmp_path / 'run'}",
                           f"cache_dir={tmp_path / 'cache'}", "hardware=cpu", "llm=none", "tracking=none", *args],
                          check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.mark.slow
def test_gold_id_of_deleted_passage_is_a_clear_error(tmp_path, updated_index):
    u = updated_index
    queries = write_jsonl(tmp_path / "q.jsonl", [{"id": "qx", "question": "?", "gold_ids": ["p07"]}])
    proc = run_cli(tmp_path, "method=bm25", f"index_dir={u['index']}", "data=jsonl",
                   f"data.corpus={u['full_corpus']}", f"data.queries={queries}")
    assert proc.returncode == 2, proc.stderr
    assert "query 'qx': gold passage id(s) ['p07'] are not in the index" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_index_dir_and_unsupported_method(tmp_path):
    proc = run_cli(tmp_path, "method=bm25", f"index_dir={tmp_path / 'nope'}")
    assert proc.returncode == 2 and "index directory not found" in proc.stderr, proc.stderr
    from hyperrag.errors import InputError
    from hyperrag.retrievers.base import Retriever
    from hyperrag.runners.prepare import build_retriever

    class CorpusOnly(Retriever):  # a user's retriever that does not declare supports_index_dir
        name = "corpus_only"

    class CorpusOnlySettings:  # its settings name it, as hyperrag.retrievers.settings classes do
        retriever = CorpusOnly

    with pytest.raises(InputError, match="method 'corpus_only' cannot retrieve over an index directory"):
        build_retriever(CorpusOnlySettings(), None, None, tmp_path)


def test_resume_through_retrieve(tmp_path):
    """A run cut short (here: the first 3 queries) is continued by a rerun into the same out=; a full rerun
    retrieves nothing new; resume=false starts afresh."""
    first = retrieve.run(compose_retrieve(tmp_path, "method=bm25", "limit_queries=3"))
    assert first["queries"] == 3 and first["resumed_queries"] == 0
    partial = predictions(tmp_path)
    second = retrieve.run(compose_retrieve(tmp_path, "method=bm25"))
    assert second["queries"] == 6 and second["resumed_queries"] == 3
    rows = predictions(tmp_path)
    assert list(rows) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert all(rows[q] == partial[q] for q in partial)  # finished rows kept as written
    third = retrieve.run(compose_retrieve(tmp_path, "method=bm25"))
    assert third["resumed_queries"] == 6 and third["queries_per_second"] == 0  # nothing retrieved
    assert predictions(tmp_path) == rows
    fresh = retrieve.run(compose_retrieve(tmp_path, "method=bm25", "resume=false"))
    assert fresh["resumed_queries"] == 0 and fresh["queries"] == 6


@pytest.mark.slow  # the module's updated_index fixture builds and updates an index (~50 s on 2 cores)
@pytest.mark.parametrize("method", ["dense", "hipporag2", "catrag", "hugrag", "hyperrag", "cdfrag"])
def test_index_dir_needs_its_own_embedder(updated_index, tmp_path, method):
    """Every method that embeds opens an index directory the same way (Retriever.open_index_dir): passages in
    index order first, then the embedder's identity; another embedder stops with one line naming both."""
    from hydra.utils import get_class

    from hyperrag.config import method_settings
    from hyperrag.data import jsonl_dataset
    from hyperrag.errors import InputError
    from hyperrag.index.passages import dataset_for_index
    from tests.reliability.doubles import HashEncoder

    u = updated_index
    settings = method_settings(method) if method == "dense" else method_settings(method, index_root=str(tmp_path))
    cls = get_class(settings.retriever)
    ds = dataset_for_index(jsonl_dataset(u["full_corpus"], u["queries"]), u["index"])
    with pytest.raises(InputError, match="index was embedded with '.+', the configured embedder is 'hash-trigram-64'"):
        cls(settings, encoder=HashEncoder(), index_dir=str(u["index"]), device="cpu").index(ds)
    raw = jsonl_dataset(u["full_corpus"], u["queries"])  # not aligned: corpus order and passages differ
    with pytest.raises(InputError, match="not this index's passages in index order"):
        cls(settings, encoder=HashEncoder(), index_dir=str(u["index"]), device="cpu").index(raw)


@pytest.mark.slow  # the module's updated_index fixture builds and updates an index (~50 s on 2 cores)
def test_bm25_over_an_index_dir_needs_no_embedder(updated_index):
    from hyperrag.config import method_settings
    from hyperrag.data import jsonl_dataset
    from hyperrag.index.passages import dataset_for_index
    from hyperrag.retrievers import BM25Retriever
    from tests.reliability.doubles import HashEncoder

    u = updated_index
    ds = dataset_for_index(jsonl_dataset(u["full_corpus"], u["queries"]), u["index"])
    r = BM25Retriever(method_settings("bm25"), encoder=HashEncoder(), index_dir=str(u["index"]))
    r.index(ds)
    assert r.index_key and r.retrieve([QUESTION], 1).indices.tolist() == [[ds.corpus.ids.index("n01")]]
