"""A tiny 2WikiMultiHopQA split in the layout of ``../shared/data/2wiki_dev`` (gold by title, ``type``,
Wikidata ``evidences``): one question of each type over eight invented passages, with an OpenIE file whose
triples are the passages' facts. Names differ between evidence and titles as they do in 2Wiki ("Tomas of Brenn"
vs the title "Tomas Vell, Lord of Brenn"; "Quiet Harbor" vs "Quiet Harbor (film)")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PASSAGES: list[tuple[str, str, list[list[str]]]] = [
    ("Quiet Harbor (film)", "Quiet Harbor is a 1958 drama film directed by Lena Ardmore.",
     [["Quiet Harbor", "directed by", "Lena Ardmore"]]),
    ("Night Ferry", "Night Ferry is a 1962 thriller film directed by Mira Kost.",
     [["Night Ferry", "directed by", "Mira Kost"]]),
    ("Lena Ardmore", "Lena Ardmore (3 May 1921 - 1990) was a film director born in Port Silas.",
     [["Lena Ardmore", "born in", "Port Silas"], ["Lena Ardmore", "born on", "3 May 1921"]]),
    ("Mira Kost", "Mira Kost (born 9 June 1930) is a director and screenwriter.",
     [["Mira Kost", "born on", "9 June 1930"]]),
    ("Oskar Vell", "Oskar Vell was a sculptor, the son of Tomas Vell, Lord of Brenn.",
     [["Oskar Vell", "son of", "Tomas Vell"]]),
    ("Tomas Vell, Lord of Brenn", "Tomas of Brenn was a nobleman whose father was Anselm Vell.",
     [["Tomas of Brenn", "father", "Anselm Vell"]]),
    ("Port Silas", "Port Silas is a harbour town on the Tessel estuary.",
     [["Port Silas", "on", "Tessel estuary"]]),
    ("Anselm Vell", "Anselm Vell founded the abbey of Brenn in 1802.",
     [["Anselm Vell", "founded", "abbey of Brenn"]]),
]
TITLES = [t for t, _, _ in PASSAGES]
POS = {t: str(i) for i, t in enumerate(TITLES)}  # corpus ids are positions

QUESTIONS: list[dict[str, Any]] = [
    {"_id": "comp", "type": "compositional", "question": "Where was the director of film Quiet Harbor born?",
     "answer": "Port Silas", "answer_aliases": [], "supporting_titles": ["Lena Ardmore", "Quiet Harbor (film)"],
     "evidences": [["Quiet Harbor", "director", "Lena Ardmore"], ["Lena Ardmore", "place of birth", "Port Silas"]]},
    {"_id": "inf", "type": "inference", "question": "Who is the paternal grandfather of Oskar Vell?",
     "answer": "Anselm Vell", "supporting_titles": ["Tomas Vell, Lord of Brenn", "Oskar Vell"],
     "evidences": [["Oskar Vell", "father", "Tomas of Brenn"], ["Tomas of Brenn", "father", "Anselm Vell"]]},
    {"_id": "cmp", "type": "comparison", "question": "Who was born first, Lena Ardmore or Mira Kost?",
     "answer": "Lena Ardmore", "supporting_titles": ["Mira Kost", "Lena Ardmore"],
     "evidences": [["Lena Ardmore", "date of birth", "3 May 1921"], ["Mira Kost", "date of birth", "9 June 1930"]]},
    {"_id": "bcmp", "type": "bridge_comparison",
     "question": "Which film has the director born later, Quiet Harbor or Night Ferry?", "answer": "Night Ferry",
     "supporting_titles": ["Mira Kost", "Quiet Harbor (film)", "Lena Ardmore", "Night Ferry"],
     "evidences": [["Quiet Harbor", "director", "Lena Ardmore"], ["Night Ferry", "director", "Mira Kost"],
                   ["Lena Ardmore", "date of birth", "3 May 1921"], ["Mira Kost", "date of birth", "9 June 1930"]]},
]

#: per question: the expected hops (question, answer, gold title; the comparison hop has no passage)
EXPECTED_HOPS: dict[str, list[tuple[str, str, str | None]]] = {
    "comp": [("What is the director of Quiet Harbor?", "Lena Ardmore", "Quiet Harbor (film)"),
             ("What is the place of birth of #1?", "Port Silas", "Lena Ardmore")],
    "inf": [("What is the father of Oskar Vell?", "Tomas of Brenn", "Oskar Vell"),
            ("What is the father of #1?", "Anselm Vell", "Tomas Vell, Lord of Brenn")],
    "cmp": [("What is the date of birth of Lena Ardmore?", "3 May 1921", "Lena Ardmore"),
            ("What is the date of birth of Mira Kost?", "9 June 1930", "Mira Kost"),
            (("Who was born first, Lena Ardmore or Mira Kost? Given: Lena Ardmore date of birth #1; Mira Kost date "
             "of birth #2."), "Lena Ardmore", None)],
    "bcmp": [("What is the director of Quiet Harbor?", "Lena Ardmore", "Quiet Harbor (film)"),
             ("What is the date of birth of #1?", "3 May 1921", "Lena Ardmore"),
             ("What is the director of Night Ferry?", "Mira Kost", "Night Ferry"),
             ("What is the date of birth of #3?", "9 June 1930", "Mira Kost"),
             (("Which film has the director born later, Quiet Harbor or Night Ferry? Given: Quiet Harbor director "
              "#1; #1 date of birth #2; Night Ferry director #3; #3 date of birth #4."), "Night Ferry", None)],
}


def write_wiki2(folder: Path) -> Path:
    """``2wikimultihopqa.json``, ``2wikimultihopqa_corpus.json`` and ``openie.json`` (HippoRAG's layout) in
    ``folder``; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = [{"title": t, "text": x} for t, x, _ in PASSAGES]
    (folder / "2wikimultihopqa_corpus.json").write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    (folder / "2wikimultihopqa.json").write_text(json.dumps(QUESTIONS, ensure_ascii=False), encoding="utf-8")
    docs = [{"idx": i, "passage": f"{t}\n{x}", "extracted_entities": sorted({e for s, _, o in tr for e in (s, o)}),
             "extracted_triples": tr} for i, (t, x, tr) in enumerate(PASSAGES)]
    (folder / "openie.json").write_text(json.dumps({"docs": docs}, ensure_ascii=False), encoding="utf-8")
    return folder
