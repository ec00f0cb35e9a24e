"""The HolisQA release reader (``data=holisqa``, ``data=paper data.name=holisqa_<domain>``) on a two-article fixture
in the release layout: abstracts cut into passages, each gold sentence mapped to the passages holding it, context
recall counted from them by hand, and a gold sentence id that ``sentences.jsonl`` lacks stopping with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hyperrag.data.holisqa_release import read_holisqa_release
from hyperrag.data.paper_data import paper_dataset, present
from hyperrag.errors import InputError
from hyperrag.eval.context import context_recall, row_context_recall
from hyperrag.index.chunking import ChunkSettings

REPO_ROOT = Path(__file__).resolve().parents[2]

# Article A000001: four sentences (10, 7, 6 and 5 words); A000002: two (6 and 6 words)
A1 = ["Oil palm roots raise acid phosphatase activity under phosphorus limitation.",
      "Acid phosphatase releases phosphate from organic compounds.",
      "Tolerant genotypes show higher kinase activity.",
      "The kinase signals root growth."]
A2 = ["Mycorrhizal fungi extend the root surface.", "They help plants take up phosphate."]
# chunks of at most 12 words, cut at sentence ends: A000001 → [s1], [s2], [s3 s4]; A000002 (12 words) → one passage
WORDS_12 = ChunkSettings(tokenizer="words", chunk_size=12, overlap=0)


def write_domain(root: Path, domain: str = "medicine", gold: tuple[list[str], list[str]] | None = None) -> Path:
    folder = root / domain
    folder.mkdir(parents=True)
    (folder / "all_abstracts.txt").write_text(" ".join(A1) + "\n\n" + " ".join(A2))
    sentences = [("A000001", A1), ("A000002", A2)]
    rows, n = [], 0
    for art, sents in sentences:
        for i, text in enumerate(sents):
            n += 1
            rows.append({"sentence_id": f"S{n:08d}", "article_id": art, "sent_idx": i, "text": text})
    (folder / "sentences.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "articles.jsonl").write_text("".join(json.dumps({"article_id": a, "title": f"Paper {a}"}) + "\n"
                                                   for a, _ in sentences))
    q1, q2 = gold or (["S00000001", "S00000002"], ["S00000004", "S00000005"])
    qa = [{"qa_id": "QA000001", "question": "How do oil palm roots respond to phosphorus limitation?",
           "answer": "They raise acid phosphatase activity. The enzyme releases phosphate.",
           "context_sentence_ids": q1},
          {"qa_id": "QA000002", "question": "What helps roots when phosphate is scarce?",
           "answer": "Kinase signalling drives root growth. Mycorrhizal fungi help take up phosphate.",
           "context_sentence_ids": q2}]
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    return root


def test_abstracts_become_passages_and_gold_sentences_map_to_the_passages_holding_them(tmp_path):
    ds = read_holisqa_release(write_domain(tmp_path), "medicine", WORDS_12, tmp_path / "cache")
    assert ds.name == "holisqa_medicine"
    assert [(p.id, p.text) for p in ds.corpus.passages] == [
        ("A000001#0", A1[0]), ("A000001#1", A1[1]), ("A000001#2", f"{A1[2]} {A1[3]}"), ("A000002", " ".join(A2))]
    assert all(p.title == "" for p in ds.corpus.passages)  # all_abstracts.txt has no titles
    q1, q2 = ds.queries
    assert q1.answers == ("They raise acid phosphatase activity. The enzyme releases phosphate.",)
    assert q1.gold_ids == ("A000001#0", "A000001#1") and q2.gold_ids == ("A000001#2", "A000002")
    assert [(g.id, g.text, g.passage_ids) for g in q2.gold_sentences] == [
        ("S00000004", A1[3], ("A000001#2",)), ("S00000005", A2[0], ("A000002",))]
    assert list((tmp_path / "cache" / "holisqa_release").glob("chunks-*.json"))  # the chunking is cached
    again = read_holisqa_release(tmp_path, "medicine", WORDS_12, tmp_path / "cache")
    assert again.corpus.ids == ds.corpus.ids


def test_overlapping_chunks_list_every_passage_holding_a_sentence(tmp_path):
    """12-word chunks overlapping by 6: s3 lies whole in two chunks (both listed, the first is its gold passage)."""
    write_domain(tmp_path, gold=(["S00000001", "S00000002"], ["S00000003", "S00000005"]))
    ds = read_holisqa_release(tmp_path, "medicine", ChunkSettings("words", 12, 6), None)
    texts = {p.id: p.text for p in ds.corpus.passages}
    assert texts["A000001#3"] == f"compounds. {A1[2]}" and texts["A000001#4"] == f"{A1[2]} {A1[3]}"
    s3 = ds.queries[1].gold_sentences[0]
    assert s3.passage_ids == ("A000001#3", "A000001#4") and ds.queries[1].gold_ids[0] == "A000001#3"


def test_a_sentence_cut_by_a_chunk_boundary_goes_to_the_chunk_holding_most_of_it(tmp_path):
    """6-word chunks: s1 (10 words) is cut into 6 + 4 words; its passage is the first chunk."""
    ds = read_holisqa_release(write_domain(tmp_path), "medicine", ChunkSettings("words", 6, 0), None)
    s1 = ds.queries[0].gold_sentences[0]
    assert [p.text for p in ds.corpus.passages[:2]] == ["Oil palm roots raise acid phosphatase",
                                                        "activity under phosphorus limitation."]
    assert s1.passage_ids == ("A000001#0",)


def test_a_missing_gold_sentence_id_is_one_line(tmp_path):
    write_domain(tmp_path, gold=(["S00000001", "S00000099"], ["S00000004"]))
    with pytest.raises(InputError) as err:
        read_holisqa_release(tmp_path, "medicine", WORDS_12, None)
    qa = tmp_path / "medicine" / "qa.jsonl"
    assert str(err.value) == (f"{qa}:1: field 'context_sentence_ids': question QA000001: gold sentence id S00000099 "
                              "is not in sentences.jsonl")


def test_context_recall_by_hand():
    """Q1's gold: s1 (held by A000001#0) and s2 (A000001#1). A context of A000001#1 and A000002 covers s2 only: 1/2;
    recorded evidence holding s1's text covers it too: 2/2. A sentence held by two overlapping chunks is covered by
    either. No gold: None."""
    gold = [{"id": "S1", "text": A1[0], "passage_id": "A000001#0", "passage_ids": ["A000001#0"]},
            {"id": "S2", "text": A1[1], "passage_id": "A000001#1", "passage_ids": ["A000001#1"]}]
    row = {"ranked_ids": ["A000001#1", "A000002", "A000001#0"], "gold_ids": ["A000001#0", "A000001#1"],
           "gold_sentences": gold}
    assert row_context_recall(row, 2) == 0.5
    assert row_context_recall(row, 3) == 1.0
    assert row_context_recall({**row, "details": {"evidence": ["note", A1[0].upper()]}}, 2) == 1.0
    twice = {"id": "S3", "text": "x", "passage_id": "p1", "passage_ids": ["p1", "p2"]}
    assert context_recall(["p2"], gold_sentences=[twice]) == 1.0 and context_recall(["p3"], gold_sentences=[twice]) == 0
    assert row_context_recall({"ranked_ids": ["a"]}, 3) is None


def test_per_query_context_recall_matches_the_runs_figure():
    """The values behind a run's context_recall (intervals, paired tests) are the rows' own, at the reader's cut-off,
    and score_rows's figure is their mean."""
    from hyperrag.eval.per_query import per_query_values
    from hyperrag.runners.batch_retrieval import score_rows

    gold = [{"id": "S1", "text": A1[0], "passage_id": "p1", "passage_ids": ["p1"]},
            {"id": "S2", "text": A1[1], "passage_id": "p2", "passage_ids": ["p2", "p3"]}]
    rows = [{"id": "a", "ranked_ids": ["p1", "p3", "x"], "gold_ids": ["p1", "p2"], "gold_sentences": gold},
            {"id": "b", "ranked_ids": ["x", "p1", "p2"], "gold_ids": ["p1", "p2"], "gold_sentences": gold}]
    assert per_query_values(rows, answer_top_n=2)["context_recall"] == {"a": 1.0, "b": 0.5}
    metrics = score_rows(rows, (2,), answer_top_n=2)
    assert metrics["context_recall"] == 75.0 and metrics["context_recall_top_n"] == 2
    assert metrics["context_recall_ci"][0] <= 75.0 <= metrics["context_recall_ci"][1]


def test_paper_data_reads_the_release_under_the_domain_folders(tmp_path):
    write_domain(tmp_path / "holisqa_release")
    root = tmp_path / "holisqa_release"
    assert present(root, "holisqa_medicine") and not present(root, "holisqa_biology")
    ds = paper_dataset(root, "holisqa_medicine", chunking=WORDS_12, cache_dir=None)
    assert ds.name == "holisqa_medicine" and len(ds.corpus) == 4 and ds.queries[0].gold_sentences
    write_domain(tmp_path / "paper" / "holisqa", "biology")  # paper_data holding holisqa/<domain>/
    assert paper_dataset(tmp_path / "paper", "holisqa_biology", chunking=WORDS_12).queries[1].gold_ids == (
        "A000001#2", "A000002")


@pytest.mark.slow  # retrieve.py in a subprocess (~20 s)
def test_retrieve_prints_context_recall_with_its_interval_and_stops_on_a_missing_sentence(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline", "HYPERRAG_CACHE": str(tmp_path / "cache")}
    base = [sys.executable, str(REPO_ROOT / "retrieve.py"), "data=holisqa", f"data.dir={tmp_path / 'ok'}",
            "data.domain=medicine", "method=bm25", "llm=none", "tracking=none", "answer_top_n=2",
            "chunking.tokenizer=words", "chunking.chunk_size=12", "chunking.overlap=0"]
    write_domain(tmp_path / "ok")
    proc = subprocess.run([*base, f"out={tmp_path / 'run'}"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())["metrics"]
    assert metrics["context_recall_top_n"] == 2 and 0 <= metrics["context_recall"] <= 100
    assert "context_recall" in proc.stdout and f"{metrics['context_recall']:.1f} [" in proc.stdout
    rows = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert rows[0]["gold_sentences"][0]["passage_ids"] == ["A000001#0"]
    write_domain(tmp_path / "bad", gold=(["S00000001"], ["S00000077"]))
    proc = subprocess.run([*base, f"data.dir={tmp_path / 'bad'}", f"out={tmp_path / 'run2'}"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr[-2000:]
    qa = tmp_path / "bad" / "medicine" / "qa.jsonl"
    line = (f"error: {qa}:2: field 'context_sentence_ids': question QA000002: gold sentence id S00000077 is not in "
            "sentences.jsonl")
    assert proc.stderr.strip().splitlines() == [line]


def test_a_repeated_abstract_holds_the_sentence_too(tmp_path):
    """The release repeats some abstracts under two article ids (medicine: 69): a gold sentence of one copy is also
    held by the other copy's passage, so retrieving either covers it; gold_ids keep the sentence's own article."""
    folder = write_domain(tmp_path, gold=(["S00000007"], ["S00000005"])) / "medicine"
    (folder / "all_abstracts.txt").write_text(" ".join(A1) + "\n\n" + " ".join(A2) + "\n\n" + " ".join(A2))
    with open(folder / "articles.jsonl", "a") as f:
        f.write(json.dumps({"article_id": "A000003", "title": "Paper A000002 again"}) + "\n")
    with open(folder / "sentences.jsonl", "a") as f:
        f.writelines(json.dumps({"sentence_id": f"S{7 + i:08d}", "article_id": "A000003", "sent_idx": i,
                                "text": text}) + "\n" for i, text in enumerate(A2))
    ds = read_holisqa_release(tmp_path, "medicine", WORDS_12, None)
    assert ds.corpus.ids[-2:] == ["A000002", "A000003"]
    copy_gold, own_gold = ds.queries[0].gold_sentences[0], ds.queries[1].gold_sentences[0]
    assert copy_gold.passage_ids == ("A000003", "A000002") and ds.queries[0].gold_ids == ("A000003",)
    assert own_gold.passage_ids == ("A000002", "A000003") and ds.queries[1].gold_ids == ("A000002",)
    # retrieving the copy covers the sentence
    gold = [g.record() for g in ds.queries[0].gold_sentences]
    assert context_recall(["A000002"], gold_sentences=gold) == 1.0
