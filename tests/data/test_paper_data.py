"""paper_data: the papers' files in their downloaded layouts — HippoRAG 2's chunk-keyed OpenIE output, the registry's
missing-file lines, the skip / exit-2 rule of a table launch, and one table command end to end on a slice of
../shared/data/paper_format (the MuSiQue rehearsal in miniature)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hyperrag.data.openie import chunk_id, read_openie
from hyperrag.data.paper_data import PAPER_DATASETS, find_openie, missing_line, paper_dataset, present
from hyperrag.data.types import Corpus, Passage
from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT

PAPER_FORMAT = REPO_ROOT.parent / "shared" / "data" / "paper_format"


def _corpus() -> Corpus:
    return Corpus([Passage("0", "Paris", "Paris is the capital of France."),
                   Passage("1", "Rome", "Rome is the capital of Italy.")], source="c.json")


def _doc(title: str, text: str, triples: list) -> dict:
    return {"idx": chunk_id(title, text), "passage": f"{title}\n{text}", "extracted_entities": [title],
            "extracted_triples": triples}


def test_hipporag2_openie_is_matched_by_chunk_id_in_any_order(tmp_path):
    path = tmp_path / "openie_results_ner_gpt-4o-mini.json"
    docs = [_doc("Rome", "Rome is the capital of Italy.", [["Rome", "capital of", "Italy"], ["bad"]]),
            _doc("Paris", "Paris is the capital of France.", [["Paris", "capital of", "France"]])]
    path.write_text(json.dumps({"docs": docs, "avg_ent_chars": 4.5, "avg_ent_words": 1.0}))
    records = read_openie(path, _corpus())
    assert records.triples == [[("Paris", "capital of", "France")], [("Rome", "capital of", "Italy")]]
    assert records.skipped_triples == 1
    assert chunk_id("Paris", "Paris is the capital of France.").startswith("chunk-")


def test_openie_of_another_corpus_or_with_a_gap_is_one_clear_error(tmp_path):
    path = tmp_path / "openie.json"
    path.write_text(json.dumps({"docs": [_doc("Berlin", "Berlin is in Germany.", [])]}))
    with pytest.raises(InputError, match=r"record 0.*field 'idx'.*not the chunk id of any passage"):
        read_openie(path, _corpus())
    path.write_text(json.dumps({"docs": [_doc("Paris", "Paris is the capital of France.", [])]}))
    with pytest.raises(InputError, match=r"no record for 1 of the corpus's 2 passages, e.g. '1' \('Rome'"):
        read_openie(path, _corpus())


def _write_release(root: Path, name: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}_corpus.json").write_text(json.dumps([{"title": "Paris", "text": "Paris is the capital of "
                                                                                        "France."},
                                                          {"title": "Rome", "text": "Rome is the capital of Italy."}]))
    (root / f"{name}.json").write_text(json.dumps([{"id": "q1", "question": "What is the capital of France?",
                                                    # HoVer's answer is the claim's label (its options)
                                                    "answer": "SUPPORTED" if name == "hover" else "Paris",
                                                    "paragraphs": [
                                                        {"title": "Paris", "paragraph_text": "Paris is the capital of "
                                                         "France.", "is_supporting": True}]}]))


def test_registry_reads_present_datasets_and_names_missing_files(tmp_path):
    _write_release(tmp_path, "hover")
    assert present(tmp_path, "hover") and not present(tmp_path, "musique") and not present(None, "hover")
    line = missing_line(tmp_path, "musique")
    assert line.startswith(f"musique: put musique.json + musique_corpus.json under {tmp_path}/")
    assert "HippoRAG 2 release" in line
    (tmp_path / "musique.json").write_text("[]")
    assert missing_line(tmp_path, "musique").startswith("musique: put musique_corpus.json under")
    assert "no reader yet" in missing_line(tmp_path, "adversarialqa") or PAPER_DATASETS["adversarialqa"].reader_issue \
        is None
    ds = paper_dataset(tmp_path, "hover")
    assert ds.name == "hover" and [list(q.gold_ids) for q in ds.queries] == [["0"]] and ds.openie_path is None
    with pytest.raises(InputError, match="set paper_data=DIR"):
        paper_dataset(None, "hover")
    with pytest.raises(InputError, match="unknown paper dataset 'nope'"):
        paper_dataset(tmp_path, "nope")
    with pytest.raises(InputError, match="musique: put musique_corpus.json"):
        paper_dataset(tmp_path, "musique")


def test_a_top_level_openie_file_is_used_only_for_its_own_corpus(tmp_path):
    _write_release(tmp_path, "hover")
    _write_release(tmp_path / "other", "nq")
    (tmp_path / "openie_results_ner_m.json").write_text(json.dumps(
        {"docs": [_doc("Paris", "Paris is the capital of France.", []), _doc("Rome", "Rome is the capital of Italy.",
                                                                              [])]}))
    assert find_openie(tmp_path, "hover") == tmp_path / "openie_results_ner_m.json"
    (tmp_path / "nq_corpus.json").write_text(json.dumps([{"title": "Oslo", "text": "Oslo is in Norway."}]))
    assert find_openie(tmp_path, "nq") is None
    assert paper_dataset(tmp_path, "hover").openie_path == tmp_path / "openie_results_ner_m.json"


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_MODE="offline",
                HYPERRAG_CACHE=os.environ.get("HYPERRAG_CACHE", str(tmp_path / "cache")))


@pytest.mark.slow  # a four-job retrieve.py multirun in a subprocess (~18 s); the default run keeps retrieve.py's exit-2
# path through tests/test_retrieve_entry.py and tests/config/test_settings.py
def test_a_table_with_no_dataset_present_stops_with_exit_2_naming_each(tmp_path):
    proc = subprocess.run([sys.executable, "retrieve.py", "-m", "experiment=catrag_table", f"paper_data={tmp_path}",
                           "llm=oracle", "tracking=none", f"hydra.sweep.dir={tmp_path / 'multirun'}"],
                          cwd=REPO_ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [x for x in proc.stderr.splitlines() if x.startswith("missing dataset ")]
    assert [x.split()[2].rstrip(":") for x in lines] == ["musique", "2wikimultihopqa", "hotpotqa", "hover"]
    assert "none of this table's datasets (musique, 2wikimultihopqa, hotpotqa, hover)" in proc.stderr


def _slice_of_paper_format(dest: Path, questions: int = 4) -> None:
    """The first questions of paper_format's MuSiQue with the passages they list (gold and distractors) and the
    OpenIE records of those passages, in the same three files and layouts."""
    queries = json.loads((PAPER_FORMAT / "musique.json").read_text())[:questions]
    keep = {(p["title"], " ".join(p["paragraph_text"].split())) for q in queries for p in q["paragraphs"]}
    corpus = [p for p in json.loads((PAPER_FORMAT / "musique_corpus.json").read_text())
              if (p["title"], " ".join(p["text"].split())) in keep]
    ids = {chunk_id(p["title"], p["text"]) for p in corpus}
    openie = json.loads((PAPER_FORMAT / "openie_results_ner_gpt-3.5-turbo-1106.json").read_text())
    openie["docs"] = [d for d in openie["docs"] if d["idx"] in ids]
    dest.mkdir(parents=True)
    (dest / "musique.json").write_text(json.dumps(queries))
    (dest / "musique_corpus.json").write_text(json.dumps(corpus))
    (dest / "openie_results_ner_gpt-3.5-turbo-1106.json").write_text(json.dumps(openie))


@pytest.mark.slow  # a retrieve.py multirun in a subprocess (~30 s): in .ci/run's slow call
@pytest.mark.skipif(not PAPER_FORMAT.is_dir(), reason="needs ../shared/data/paper_format")
def test_catrag_table_command_on_a_slice_of_paper_format(tmp_path):
    """The rehearsal command in miniature: the table's datasets that are present run, the others are named, and the
    report shows the published rows with intervals and the paired tests."""
    data = tmp_path / "paper_data"
    _slice_of_paper_format(data)
    sweep = tmp_path / "multirun" / "catrag_table" / "stamp"
    cmd = [sys.executable, "retrieve.py", "-m", "experiment=catrag_table", f"paper_data={data}", "models=offline",
           "llm=oracle", "tracking=none", "method=dense,catrag", f"hydra.sweep.dir={sweep}"]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sum(x.startswith("missing dataset ") for x in proc.stderr.splitlines()) == 3  # 2wiki, hotpotqa, hover
    runs = sorted(p.parent.name for p in sweep.rglob("metrics.json"))
    assert len(runs) == 2 and all("data.name=musique" in r for r in runs)
    metrics = json.loads(next(p for p in sweep.rglob("metrics.json") if "method=catrag" in p.parent.name)
                         .read_text())["metrics"]
    assert metrics["models"] == "substituted" and metrics["llm_label"] == "upper bound (oracle)"
    report = subprocess.run([sys.executable, "report.py", f"runs={sweep}", f"out={tmp_path / 'reports'}"],
                            cwd=REPO_ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert report.returncode == 0, report.stderr[-2000:]
    text = (tmp_path / "reports" / "catrag_table" / "report.md").read_text()
    assert "substituted models" in text and "## Paired tests against the strongest baseline" in text
    assert "| paper (published): CatRAG | 64.9 |" in text and "Δ ours − paper (CatRAG)" in text
    assert " [" in text.split("## Results")[1].split("##")[0]  # intervals beside the means


def test_docs_reproduce_lists_every_registered_dataset_with_its_files():
    text = (REPO_ROOT / "docs" / "reproduce.md").read_text()
    for name, spec in PAPER_DATASETS.items():
        line = next((x for x in text.splitlines() if x.startswith(f"| `{name}` |")), None)
        assert line is not None, name
        assert all(f"`{f}`" in line for f in spec.files), name
