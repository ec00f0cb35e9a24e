"""Tiny benchmark files written for the tests, in each downloaded format (HippoRAG 2 release, HotpotQA, HoVer,
multiple choice). The facts are invented for these tests: a small region with a lake, a river, a port town
and a cartographer, so that two-hop questions have two gold passages."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

# title -> sentences; a passage's text is its sentences joined with spaces
WORLD: dict[str, list[str]] = {
    "Lake Varn": ["Lake Varn is a glacial lake in the north of Ostrava Province.",
                  "Its outflow feeds the Tessel River."],
    "Tessel River": ["The Tessel River flows south from Lake Varn to the port town of Marrow."],
    "Marrow": ["Marrow is a port town founded in 1702.", "It is the seat of Ostrava Province."],
    "Ada Quill": ["Ada Quill was a cartographer born in Marrow in 1851.", "She mapped the Tessel River basin."],
    "Brin Hollow": ["Brin Hollow is a village in the hills east of Marrow, known for slate quarries."],
    "Ostrava Province": ["Ostrava Province is a coastal region whose capital is Marrow."],
}
TITLES = list(WORLD)


def text_of(title: str) -> str:
    return " ".join(WORLD[title])


def corpus_records(extra: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    return [{"title": t, "text": text_of(t)} for t in TITLES] + list(extra or [])


def context_of(titles: list[str], leading_space: bool = False) -> list[list[Any]]:
    """``context`` entries ``[title, [sentence, ...]]``; HotpotQA's sentences after the first open with a space."""
    return [[t, [(" " + s if leading_space and i else s) for i, s in enumerate(WORLD[t])]] for t in titles]


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def two_hop_facts() -> list[list[Any]]:
    return [["Ada Quill", 0], ["Marrow", 0], ["Marrow", 1]]


def release_questions(name: str) -> list[dict[str, Any]]:
    """Question records of the HippoRAG 2 release, shaped per dataset."""
    if name in ("2wikimultihopqa", "hotpotqa"):
        hotpot = name == "hotpotqa"
        return [{"_id": "w1", "question": "When was the birthplace of the cartographer of the Tessel River founded?",
                 "answer": "1702", "supporting_facts": two_hop_facts(),
                 "context": context_of(["Brin Hollow", "Ada Quill", "Marrow"], leading_space=hotpot),
                 "type": "compositional"},
                {"_id": "w2", "question": "Which lake feeds the river that reaches Marrow?", "answer": "Lake Varn",
                 "supporting_facts": [["Tessel River", 0], ["Lake Varn", 1]],
                 "context": context_of(["Tessel River", "Lake Varn"], leading_space=hotpot)}]
    if name == "musique":
        paragraphs = [{"idx": i, "title": t, "paragraph_text": text_of(t), "is_supporting": t in ("Ada Quill", "Marrow")}
                      for i, t in enumerate(["Brin Hollow", "Ada Quill", "Marrow"])]
        return [{"id": "2hop__1_2", "question": "When was the birthplace of Ada Quill founded?", "answer": "1702",
                 "answer_aliases": ["in 1702"], "answerable": True, "paragraphs": paragraphs,
                 "question_decomposition": [
                     {"id": 1, "question": "Where was Ada Quill born?", "answer": "Marrow", "paragraph_support_idx": 1},
                     {"id": 2, "question": "When was #1 founded?", "answer": "1702", "paragraph_support_idx": 2}]}]
    if name == "popqa":
        return [{"id": 7001, "subj": "Ada Quill", "prop": "occupation", "obj": "cartographer",
                 "o_wiki_title": "Cartography", "possible_answers": '["cartographer", "map maker"]',
                 "question": "What is Ada Quill's occupation?",
                 "paragraphs": [{"title": "Ada Quill", "text": text_of("Ada Quill")}]}]
    if name == "nq":
        return [{"id": "nq-1", "question": "what town is the seat of ostrava province", "answer": ["Marrow"],
                 "paragraphs": [{"title": "Marrow", "text": text_of("Marrow"), "is_supporting": True},
                                {"title": "Brin Hollow", "text": text_of("Brin Hollow"), "is_supporting": False}]}]
    raise ValueError(name)


def write_release(folder: Path, name: str) -> Path:
    """``<folder>/<name>.json`` and ``<folder>/<name>_corpus.json``; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    extra = []
    if name == "musique":  # MuSiQue corpora repeat titles: gold must be matched by title *and* text
        extra = [{"title": "Marrow", "text": "Marrow also names a kind of squash grown near the town."}]
    write_json(folder / f"{name}_corpus.json", corpus_records(extra))
    write_json(folder / f"{name}.json", release_questions(name))
    return folder


def hotpotqa_records() -> list[dict[str, Any]]:
    """HotpotQA's own format; both questions share the 'Marrow' paragraph (deduplicated in the corpus)."""
    return [{"_id": "5a8b1", "question": "When was the birthplace of the cartographer of the Tessel River founded?",
             "answer": "1702", "supporting_facts": two_hop_facts(),
             "context": context_of(["Brin Hollow", "Ada Quill", "Marrow"], leading_space=True),
             "type": "bridge", "level": "medium"},
            {"_id": "5a8b2", "question": "Are Marrow and Brin Hollow both towns?", "answer": "no",
             "supporting_facts": [["Marrow", 0], ["Brin Hollow", 0]],
             "context": context_of(["Marrow", "Brin Hollow", "Lake Varn"], leading_space=True),
             "type": "comparison", "level": "hard"}]


def hover_claims() -> list[dict[str, Any]]:
    return [{"uid": "c-1", "claim": "The cartographer Ada Quill was born in the seat of Ostrava Province.",
             "supporting_facts": [["Ada Quill", 0], ["Marrow", 1]], "label": "SUPPORTED", "num_hops": 2},
            {"uid": "c-2", "claim": "The Tessel River flows north into Lake Varn.",
             "supporting_facts": [["Tessel River", 0]], "label": "NOT_SUPPORTED", "num_hops": 2}]


def hover_corpus(nfd_titles: bool = True) -> list[dict[str, str]]:
    """HoVer's wiki dump stores NFD titles; one title here has an accent to exercise that."""
    records = corpus_records([{"title": "Café Ostrava", "text": "Café Ostrava is a coffee house in Marrow."}])
    if nfd_titles:
        records = [{**r, "title": unicodedata.normalize("NFD", r["title"])} for r in records]
    return records


def multiple_choice_records() -> list[dict[str, Any]]:
    """One record per supported field variant: generic, MedMCQA, MedQA (no id), CosmosQA (own context)."""
    return [{"id": "g1", "question": "Which river flows out of Lake Varn?",
             "options": ["Marrow Brook", "Tessel River", "Brin Creek"], "answer_index": 1, "gold_ids": ["1"]},
            {"id": "m1", "question": "When was Marrow founded?", "opa": "1650", "opb": "1702", "opc": "1851",
             "opd": "1900", "cop": 1, "choice_type": "single"},
            {"question": "Who mapped the Tessel River basin?",
             "options": {"A": "Brin Hollow", "B": "Lake Varn", "C": "Ada Quill", "D": "Ostrava"},
             "answer_idx": "C", "answer": "Ada Quill", "meta_info": "step1"},
            {"id": "cq1", "context": "I left the quarry at dusk and the slate dust would not wash off my hands.",
             "question": "What was the narrator's job likely to be?", "answer0": "Baker", "answer1": "Quarry worker",
             "answer2": "Sailor", "answer3": "None of the above choices .", "label": "1"}]
