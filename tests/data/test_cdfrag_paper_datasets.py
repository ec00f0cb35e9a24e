"""CDF-RAG's four datasets under ``paper_data``, from tiny fixtures in the layouts their releases ship:
AdversarialQA (SQuAD-format JSON), CosmosQA (JSONL), MedQA (questions + textbooks), MedMCQA (dev + train
explanations). Bad input stops with one line naming the file and field."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hyperrag.data.paper_data import PAPER_DATASETS, missing_line, paper_dataset, present
from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT

SQUAD = {"version": "adversarialQA", "data": [
    {"title": "Warsaw", "paragraphs": [
        {"context": "Warsaw lies on the Vistula river. The river floods in spring because snow melts upstream.",
         "qas": [{"id": "a1", "question": "Why does the river flood in spring?",
                  "answers": [{"text": "because snow melts upstream", "answer_start": 54},
                              {"text": "because snow melts upstream", "answer_start": 54}]},
                 {"id": "a2", "question": "Which river does Warsaw lie on?",
                  "answers": [{"text": "the Vistula", "answer_start": 16}, {"text": "Vistula", "answer_start": 20}]}]},
        {"context": "The old town was rebuilt after the war.",
         "qas": [{"id": "a3", "question": "When was the old town rebuilt?",
                  "answers": [{"text": "after the war", "answer_start": 26}]}]}]}]}

MEDQA = [{"question": "A patient with long-standing diabetes has protein in the urine. What is the likely cause?",
          "answer": "Diabetic nephropathy", "options": {"A": "Gout", "B": "Diabetic nephropathy", "C": "Asthma",
                                                        "D": "Migraine"}, "meta_info": "step2&3", "answer_idx": "B"}]
TEXTBOOKS = {"Pathology_Robbins.txt": "Chronic hyperglycemia damages the glomeruli.\n\n" + "Kidney words. " * 90,
             "Physiology_Levy.txt": "The kidney filters blood through the glomerulus."}
MEDMCQA_DEV = [{"id": "d1", "question": "Which vitamin deficiency causes scurvy?", "opa": "A", "opb": "C",
                "opc": "D", "opd": "K", "cop": 2, "exp": "Scurvy: vitamin C (dev explanation, never the corpus)",
                "subject_name": "Biochemistry", "topic_name": "Vitamins"}]
MEDMCQA_TRAIN = [{"id": "t1", "question": "?", "opa": "x", "opb": "y", "cop": 1,
                  "exp": "Vitamin C deficiency causes scurvy through defective collagen synthesis.",
                  "subject_name": "Biochemistry", "topic_name": "Vitamins"},
                 {"id": "t2", "question": "?", "opa": "x", "opb": "y", "cop": 1, "exp": None},
                 {"id": "t3", "question": "?", "opa": "x", "opb": "y", "cop": 1, "exp": "  "}]
COSMOS = [{"id": "c1", "context": "I missed the bus, so I walked to work in the rain.",
           "question": "Why did I walk?", "answer0": "I like rain", "answer1": "I missed the bus",
           "answer2": "The bus was free", "answer3": "None of the above", "label": "1"}]


def write(root: Path, name: str, content) -> Path:  # type: ignore[no-untyped-def]
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content)
    elif isinstance(content, list):
        path.write_text("".join(json.dumps(r) + "\n" for r in content))
    else:
        path.write_text(json.dumps(content))
    return path


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    write(tmp_path, "adversarialqa/combined/dev.json", SQUAD)
    write(tmp_path, "cosmosqa.jsonl", COSMOS)
    write(tmp_path, "medqa/questions/US/test.jsonl", MEDQA)
    for name, text in TEXTBOOKS.items():
        write(tmp_path, f"medqa/textbooks/en/{name}", text)
    write(tmp_path, "medmcqa/dev.json", MEDMCQA_DEV)
    write(tmp_path, "medmcqa/train.json", MEDMCQA_TRAIN)
    return tmp_path


def test_every_cdfrag_dataset_has_a_reader_and_is_found(paper):
    for name in ("cosmosqa", "medqa", "medmcqa", "adversarialqa"):
        assert PAPER_DATASETS[name].reader_issue is None and "CDF-RAG" in PAPER_DATASETS[name].papers
        assert present(paper, name), name
    assert not present(paper / "nothing", "medqa")
    assert "medqa/textbooks/en/" in missing_line(paper / "nothing", "medqa")


def test_adversarialqa_paragraphs_are_passages_and_gold(paper):
    ds = paper_dataset(paper, "adversarialqa")
    assert [p.id for p in ds.corpus.passages] == ["0-0", "0-1"] and ds.corpus[0].title == "Warsaw"
    a1, a2, a3 = ds.queries
    assert a1.answers == ("because snow melts upstream",) and a1.gold_ids == ("0-0",)
    assert a2.answers == ("the Vistula", "Vistula") and a3.gold_ids == ("0-1",) and a3.options == ()


def test_cosmosqa_contexts_are_the_corpus(paper):
    ds = paper_dataset(paper, "cosmosqa")
    (q,) = ds.queries
    assert q.answer_index == 1 and q.answers == ("I missed the bus",) and q.gold_ids == ("ctx0",)


def test_medqa_retrieves_from_its_textbooks(paper):
    ds = paper_dataset(paper, "medqa", chunk_words=40)
    (q,) = ds.queries
    assert q.answer_index == 1 and q.answers == ("Diabetic nephropathy",) and q.gold_ids == ()
    ids = [p.id for p in ds.corpus.passages]
    assert ids[0] == "Pathology_Robbins#0" and "Physiology_Levy#0" in ids and len(ids) >= 4
    assert all(len(p.text.split()) <= 40 for p in ds.corpus.passages)
    assert {p.title for p in ds.corpus.passages} == {"Pathology_Robbins", "Physiology_Levy"}
    with pytest.raises(InputError, match="data.chunk_words"):
        paper_dataset(paper, "medqa")
    with pytest.raises(InputError, match="data.chunk_words: must be >= 1, got 0"):
        paper_dataset(paper, "medqa", chunk_words=0)


def test_medmcqa_retrieves_from_the_train_explanations(paper):
    ds = paper_dataset(paper, "medmcqa")
    (q,) = ds.queries
    assert q.answer_index == 1 and q.answers == ("C",)  # the release counts cop from 1
    assert [p.id for p in ds.corpus.passages] == ["exp-t1"]  # empty explanations skipped, dev's never used
    assert ds.corpus[0].title == "Biochemistry / Vitamins"


@pytest.mark.parametrize("dataset, name, content, line", [
    ("adversarialqa", "adversarialqa/combined/dev.json", {"data": [{"title": "x", "paragraphs": [
        {"context": "c", "qas": [{"id": "q", "answers": [{"text": "a"}]}]}]}]},
     "field 'data[0].paragraphs[0].qas[0].question': expected a string, got missing"),
    ("adversarialqa", "adversarialqa/combined/dev.json", {"data": [{"title": "x", "paragraphs": [
        {"context": "c", "qas": [{"id": "q", "question": "?", "answers": []}]}]}]},
     "field 'data[0].paragraphs[0].qas[0].answers': a question needs at least one answer"),
    ("adversarialqa", "adversarialqa/combined/dev.json", {"data": [{"title": "x", "paragraphs": [
        {"context": "c", "qas": [{"id": "q", "question": "?", "answers": [{"text": "a"}]},
                                 {"id": "q", "question": "?", "answers": [{"text": "a"}]}]}]}]},
     "field 'data[0].paragraphs[0].qas[1].id': duplicate question id 'q'"),
    ("adversarialqa", "adversarialqa/combined/dev.json", '[{"title": "x"}]',
     "expected a SQuAD-format JSON object with a 'data' list, got list"),
    ("medmcqa", "medmcqa/train.json", [{"id": "t1", "exp": 7}], "train.json:1: field 'exp': expected a string"),
    ("medmcqa", "medmcqa/train.json", [{"id": "t1", "exp": None}], "no record with an explanation ('exp')"),
])
def test_bad_input_is_one_line_naming_file_and_field(paper, dataset, name, content, line):
    path = write(paper, name, content)
    with pytest.raises(InputError) as err:
        paper_dataset(paper, dataset)
    assert line in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_textbook_that_is_not_text_is_named(paper):
    bad = paper / "medqa/textbooks/en/Zz_binary.txt"
    bad.write_bytes(b"\xff\xfe\x00 not utf-8 \xc3")
    with pytest.raises(InputError, match="Zz_binary.txt: not UTF-8 text"):
        paper_dataset(paper, "medqa", chunk_words=40)


def test_retrieve_entry_stops_with_one_line_and_exit_2(paper, tmp_path):
    write(paper, "adversarialqa/combined/dev.json", {"data": [{"title": "x", "paragraphs": [{"qas": []}]}]})
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline", "HYPERRAG_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "retrieve.py"), "data=paper", "data.name=adversarialqa",
                           f"paper_data={paper}", "method=bm25", "llm=none", "tracking=none",
                           f"out={tmp_path / 'run'}"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    line = (f"error: {paper / 'adversarialqa/combined/dev.json'}: field 'data[0].paragraphs[0].context': expected "
            "a string, got missing")
    assert proc.stderr.strip().splitlines() == [line]


@pytest.mark.slow  # a retrieve.py multirun in a subprocess (~15 s): in .ci/run's slow call
def test_cdfrag_table_command_runs_the_datasets_present_in_their_release_layouts(paper, tmp_path):
    """CDF-RAG's table has no MuSiQue: its command runs on the four tiny fixtures above, in their releases'
    layouts (the baseline rows; the substituted models and the oracle keep it offline)."""
    sweep = tmp_path / "multirun"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_MODE="offline",
               HYPERRAG_CACHE=os.environ.get("HYPERRAG_CACHE", str(tmp_path / "cache")))
    proc = subprocess.run([sys.executable, "retrieve.py", "-m", "experiment=cdfrag_table", f"paper_data={paper}",
                           "models=offline", "llm=oracle", "tracking=none", "method=bm25", "data.chunk_words=60",
                           f"hydra.sweep.dir={sweep}"], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    done = {json.loads(p.read_text())["dataset"]: json.loads(p.read_text())["metrics"] for p in sweep.rglob("metrics.json")}
    assert set(done) == {"cosmosqa", "medqa", "medmcqa", "adversarialqa"}
    assert all(m["models"] == "substituted" for m in done.values())
    assert "accuracy" in done["cosmosqa"] and "em" in done["adversarialqa"]
