"""2WikiMultiHopQA in the release layout with gold given as titles (``supporting_titles``, the layout of
``../shared/data/2wiki_dev``): the reader, a missing title (one line, exit 2), a file with no gold at all (one
line instead of a metrics table without recall), and ``data=2wiki`` through the real Hydra config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hyperrag.data.hipporag2_release import read_hipporag2_release
from hyperrag.errors import InputError
from hyperrag.runners.batch_retrieval import by_type, print_metrics_table, score_rows
from tests.data.benchmark_fixtures import TITLES, corpus_records, write_json
from tests.test_retrieve_entry import compose_retrieve, retrieve, run_cli

POS = {t: str(i) for i, t in enumerate(TITLES)}  # corpus ids are positions


def title_questions() -> list[dict[str, Any]]:
    return [{"_id": "c1", "type": "compositional", "question": "When was the birthplace of Ada Quill founded?",
             "answer": "1702", "answer_aliases": ["in 1702"], "supporting_titles": ["Marrow", "Ada Quill"],
             "evidences": [["Ada Quill", "place of birth", "Marrow"], ["Marrow", "inception", "1702"]]},
            {"_id": "k1", "type": "comparison", "question": "Which was founded first, Marrow or Brin Hollow?",
             "answer": "Marrow", "supporting_titles": ["Marrow", "Brin Hollow"],
             "evidences": [["Marrow", "inception", "1702"], ["Brin Hollow", "inception", "1810"]]}]


def write_titles(folder: Path, questions: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "2wikimultihopqa_corpus.json", corpus_records())
    write_json(folder / "2wikimultihopqa.json", questions)
    return folder


def test_gold_titles_type_and_evidences_are_read(tmp_path):
    data = read_hipporag2_release(write_titles(tmp_path, title_questions()), "2wikimultihopqa")
    c1, k1 = data.queries
    assert c1.gold_ids == (POS["Marrow"], POS["Ada Quill"]) and k1.gold_ids == (POS["Marrow"], POS["Brin Hollow"])
    assert (c1.type, k1.type) == ("compositional", "comparison")
    assert c1.evidences == (("Ada Quill", "place of birth", "Marrow"), ("Marrow", "inception", "1702"))
    assert c1.answers == ("1702", "in 1702")


def test_a_title_missing_from_the_corpus_is_one_line_naming_question_and_title(tmp_path):
    questions = title_questions()
    questions[1]["supporting_titles"][1] = "Brin Holow"
    with pytest.raises(InputError) as err:
        read_hipporag2_release(write_titles(tmp_path, questions), "2wikimultihopqa")
    text = str(err.value)
    assert "\n" not in text
    assert ("2wikimultihopqa.json: record 1: field 'supporting_titles[1]': question 'k1': supporting title "
            "'Brin Holow' not found in corpus") in text


def test_bad_evidence_is_one_line(tmp_path):
    questions = title_questions()
    questions[0]["evidences"][1] = ["Marrow", "inception"]
    with pytest.raises(InputError, match=r"record 0: field 'evidences\[1\]': expected \[subject, relation, object\]"):
        read_hipporag2_release(write_titles(tmp_path, questions), "2wikimultihopqa")


@pytest.mark.slow
def test_missing_title_exits_2_from_the_command_line(tmp_path):
    questions = title_questions()
    questions[0]["supporting_titles"][0] = "Maurice of Nassau"
    folder = write_titles(tmp_path / "wiki", questions)
    proc = run_cli(tmp_path, "method=bm25", "data=2wiki", f"data.dir={folder}")
    assert proc.returncode == 2, proc.stderr
    assert "question 'c1': supporting title 'Maurice of Nassau' not found in corpus" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_no_gold_at_all_says_so_in_one_line_without_recall_or_jsr(capsys):
    rows = [{"id": "a", "ranked_ids": ["1", "2"], "gold_ids": [], "answers": ["x"], "answer": "x", "answer_ok": True},
            {"id": "b", "ranked_ids": ["2", "1"], "gold_ids": [], "answers": ["y"], "answer": "z", "answer_ok": True}]
    metrics = score_rows(rows, (2, 5), answer_top_n=5)
    assert metrics["queries_with_gold"] == 0 and "jsr" not in metrics
    assert not any(k.startswith(("recall@", "fcr@")) for k in metrics)
    assert metrics["em"] == 50.0
    print_metrics_table("dense on x (2 queries)", metrics)
    out = capsys.readouterr().out
    assert "dense on x (2 queries): no question carries gold passages, so no recall, FCR or JSR (em, f1 below)" \
        in out
    capsys.readouterr()
    print_metrics_table("bm25 on x (2 queries)", {"queries_with_gold": 0.0, "queries": 2})
    out = capsys.readouterr().out
    assert "bm25 on x (2 queries): no question carries gold passages, so no recall, FCR or JSR" in out
    assert "━" not in out  # no (empty) table


@pytest.mark.slow
def test_data_2wiki_config_reads_the_title_layout_and_scores_recall(tmp_path):
    folder = write_titles(tmp_path / "wiki", title_questions())
    cfg = compose_retrieve(tmp_path, "method=bm25", "data=2wiki", f"data.dir={folder}")
    assert cfg.data.name == "2wikimultihopqa"
    metrics = retrieve.run(cfg)
    assert metrics["queries_with_gold"] == 2 and metrics["recall@5"] == 100.0  # 6 passages: both gold in top 5
    rows = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [r["gold_ids"] for r in rows] == [[POS["Marrow"], POS["Ada Quill"]], [POS["Marrow"], POS["Brin Hollow"]]]
    assert [r["type"] for r in rows] == ["compositional", "comparison"]
    groups = json.loads((tmp_path / "run" / "metrics.json").read_text())["by_type"]
    assert list(groups) == ["compositional", "comparison"] and groups["comparison"]["queries"] == 1
    assert groups["comparison"]["recall@5"] == 100.0


def test_data_2wiki_default_folder_is_the_shared_split():
    from tests.conftest import SHARED_DATA

    cfg = compose_retrieve(Path("/tmp/unused"), "data=2wiki")
    assert cfg.data.dir.endswith("2wiki_dev")
    if not (SHARED_DATA / "2wiki_dev").is_dir():
        pytest.skip("../shared/data/2wiki_dev is absent")
    data = read_hipporag2_release(SHARED_DATA / "2wiki_dev", "2wikimultihopqa")
    assert len(data.queries) == 499 and len(data.corpus) == 6119
    assert all(len(q.gold_ids) in (2, 4) and q.type and q.evidences for q in data.queries)


def test_figures_per_question_type():
    """metrics.json's ``by_type``: score_rows's figures over each type's rows (rows without a type left out)."""
    rows = [{"id": "a", "type": "comparison", "ranked_ids": ["1", "2", "3"], "gold_ids": ["1", "2"],
             "answers": ["x"], "answer": "x", "answer_ok": True},
            {"id": "b", "type": "compositional", "ranked_ids": ["3", "1", "2"], "gold_ids": ["1", "2"],
             "answers": ["y"], "answer": "y", "answer_ok": True},
            {"id": "c", "type": "comparison", "ranked_ids": ["3", "4", "1"], "gold_ids": ["1", "2"],
             "answers": ["z"], "answer": "q", "answer_ok": True},
            {"id": "d", "ranked_ids": ["1"], "gold_ids": ["1"], "answers": ["w"], "answer": "w", "answer_ok": True}]
    groups = by_type(rows, (2,), answer_top_n=2)
    assert list(groups) == ["comparison", "compositional"]
    cmp, comp = groups["comparison"], groups["compositional"]
    assert cmp["queries"] == 2 and cmp["recall@2"] == 50.0 and cmp["fcr@2"] == 50.0 and cmp["jsr"] == 50.0
    assert comp["recall@2"] == 50.0 and comp["fcr@2"] == 0.0 and comp["jsr"] == 0.0 and comp["em"] == 100.0
    assert by_type(rows[3:], (2,), answer_top_n=2) == {}
