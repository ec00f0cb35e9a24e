"""Where LinearRAG loses to HippoRAG 2 (issue 50): is the name that chains the hops — the gold passage's title — a
node of LinearRAG's graph for that passage, and a seed of the question?

    python benchmarks/linearrag_title_gap.py [LINEARRAG_RUN HIPPORAG2_RUN] [--data 2wiki] [--k 5]
        [--types compositional bridge_comparison] [--mentions MENTIONS.jsonl] [--parse-missing] [--json OUT.json]

Without the two runs every gold passage of ``--types`` (the dataset's questions) is one group, ``all``: how often
the title is a node at all, before asking which passages make the gap. ``--parse-missing``: a gold passage without
a record in the store is parsed here (the method's spaCy components and labels; nothing is written to the store).

For every question of ``--types`` (both runs' ``predictions.jsonl``), each gold passage is put in one group:
``lost`` (LinearRAG misses it in its top ``k``, HippoRAG 2 ranks it there — the gap), ``found`` (LinearRAG ranks it
in its top ``k``: the base rate), ``both_missed``. For each gold passage of each group, its title is compared with

* LinearRAG's graph entities for that passage (its spaCy NER record in the mention store the run read — by default
  the one ``method=linearrag``'s default settings resolve to; the records are keyed by passage text):
  ``exact`` (a surface form equals the title), ``normalised`` (equal after NFKC, lower case, punctuation to spaces,
  a leading "the" dropped; or so without a trailing bracketed disambiguation), ``inside`` (an entity holds the whole normalised title, e.g. with a line break and
  more words), ``fragment`` (only part of the title is an entity), ``absent``;
* the question's own NER entities (``trigraph.question_entities``, lower-cased, as LinearRAG seeds them):
  normalised match, or whether the normalised title is in the normalised question text at all.

Shares are printed with 95% Wilson intervals over gold passages (passages of one question are not independent:
the intervals are a little narrow). Only reads finished runs and the mention store; no model but spaCy's (for the
questions).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GROUPS = ("lost", "found", "both_missed")
ENTITY_LEVELS = ("exact", "normalised", "inside", "fragment", "absent")


def norm(text: str) -> str:
    """The oracle's answer normalisation (:func:`hyperrag.llm.oracle.gold.normalize`: NFKC, case-folded, every run
    of non-word characters one space), a leading "the " dropped."""
    from hyperrag.llm.oracle.gold import normalize

    return normalize(text).removeprefix("the ")


def bare(title: str) -> str:
    """The entity the title names, as the spaCy pipeline ties a passage's triples to it
    (:func:`hyperrag.extraction.spacy_openie.title_entity`: a trailing bracketed disambiguation dropped,
    "Henry King (director)" → "Henry King", then cleaned as a node name); the title itself when it names none."""
    from hyperrag.extraction.spacy_openie import title_entity

    return title_entity(title) or title


def entity_level(title: str, entities: list[str]) -> str:
    """How the passage's title is among its graph entities: the first of ``ENTITY_LEVELS`` that holds
    (``normalised`` also matches the title without a trailing bracketed disambiguation)."""
    if title in entities:
        return "exact"
    t = norm(title)
    forms = [norm(e) for e in entities]
    if t in forms or norm(bare(title)) in forms:
        return "normalised"
    if t and any(f" {t} " in f" {f} " for f in forms):
        return "inside"
    if t and any(f and f" {f} " in f" {t} " for f in forms):
        return "fragment"
    return "absent"


def load_rows(run: Path) -> dict[str, dict]:
    from hyperrag.eval.runs import find_prediction_files, read_predictions

    rows: dict[str, dict] = {}
    for path in find_prediction_files(run):
        rows.update({str(r["id"]): r for r in read_predictions(path)})
    return rows


def classify(linear: dict[str, dict], hippo: dict[str, dict], types: set[str], k: int) -> list[dict]:
    """One record per (question, gold passage) of ``types``: its group and ids."""
    out = []
    for qid, row in linear.items():
        if qid not in hippo or str(row.get("type")) not in types:
            continue
        top_l, top_h = set(row["ranked_ids"][:k]), set(hippo[qid]["ranked_ids"][:k])
        for gold in row.get("gold_ids") or []:
            group = "found" if gold in top_l else ("lost" if gold in top_h else "both_missed")
            out.append({"qid": qid, "question": row["question"], "type": row["type"], "gold": gold, "group": group})
    return out


def share(n: int, total: int) -> dict:
    from hyperrag.eval.intervals import wilson_interval

    if not total:
        return {"n": 0, "of": 0}
    low, high = wilson_interval(n, total)
    return {"n": n, "of": total, "pct": round(100 * n / total, 1), "ci": [round(100 * low, 1), round(100 * high, 1)]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("linearrag_run", type=Path, nargs="?")
    ap.add_argument("hipporag2_run", type=Path, nargs="?")
    ap.add_argument("--parse-missing", action="store_true")
    ap.add_argument("--data", default="2wiki")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--types", nargs="+", default=["compositional", "bridge_comparison"])
    ap.add_argument("--mentions", type=Path, default=None, help="the mention store (default: the method's)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--examples", type=int, default=8)
    args = ap.parse_args()

    from hydra.utils import instantiate

    from hyperrag.config import method_settings
    from hyperrag.config.compose import compose_config
    from hyperrag.graph.trigraph import MentionStore, mention_store_path, question_entities

    settings = method_settings("linearrag")
    path = args.mentions or mention_store_path(
        settings.index_root or ".", frozenset(settings.excluded_labels), settings.ner_components,
        settings.line_break_sentences and settings.ner_components == "ner")
    store = MentionStore(path)
    dataset = instantiate(compose_config("retrieve", (f"data={args.data}",)).data)
    passages = {p.id: p for p in dataset.corpus.passages}

    if args.linearrag_run and args.hipporag2_run:
        records = classify(load_rows(args.linearrag_run), load_rows(args.hipporag2_run), set(args.types), args.k)
        groups = GROUPS
    else:
        records = [{"qid": q.id, "question": q.question, "type": q.type, "gold": g, "group": "all"}
                   for q in dataset.queries if str(q.type) in set(args.types) for g in q.gold_ids]
        groups = ("all",)
    if args.parse_missing:
        from hyperrag.graph.trigraph import parse_mentions

        todo = list(dict.fromkeys(passages[r["gold"]].content for r in records
                                  if MentionStore.key(passages[r["gold"]].content) not in store.records))
        for text, m in zip(todo, parse_mentions(todo, frozenset(settings.excluded_labels),
                                                components=settings.ner_components,
                                                line_breaks=settings.line_break_sentences
                                                and settings.ner_components == "ner")):
            store.records[MentionStore.key(text)] = m  # in memory only
    questions = sorted({r["question"] for r in records})
    q_ents = dict(zip(questions, question_entities(questions, frozenset(settings.excluded_labels),
                                                   settings.ner_components)))
    missing_record = 0
    for r in records:
        p = passages[r["gold"]]
        key = MentionStore.key(p.content)
        ents = list(store.records[key].entities) if key in store.records else []
        missing_record += key not in store.records
        r["title"] = p.title
        r["entities"] = ents
        r["entity_level"] = entity_level(p.title, ents)
        qn = [norm(e) for e in q_ents[r["question"]]]
        r["in_question_ner"] = norm(p.title) in qn or norm(bare(p.title)) in qn
        r["in_question_text"] = f" {norm(bare(p.title))} " in f" {norm(r['question'])} "

    summary: dict = {"linearrag_run": str(args.linearrag_run), "hipporag2_run": str(args.hipporag2_run),
                     "mentions": str(path), "parsed_here": args.parse_missing, "k": args.k, "types": args.types,
                     "gold_passages_without_ner_record": missing_record, "groups": {}}
    for group in groups:
        mine = [r for r in records if r["group"] == group]
        levels = Counter(r["entity_level"] for r in mine)
        g = {"gold_passages": len(mine), "questions": len({r["qid"] for r in mine}),
             "by_type": dict(Counter(r["type"] for r in mine)),
             "title_entity": {lv: share(levels[lv], len(mine)) for lv in ENTITY_LEVELS},
             "title_entity_exact_or_normalised": share(levels["exact"] + levels["normalised"], len(mine)),
             "title_in_question_ner": share(sum(r["in_question_ner"] for r in mine), len(mine)),
             "title_in_question_text": share(sum(r["in_question_text"] for r in mine), len(mine)),
             "title_in_question_text_not_ner": share(
                 sum(r["in_question_text"] and not r["in_question_ner"] for r in mine), len(mine))}
        summary["groups"][group] = g
    summary["examples_lost_absent"] = [
        {k: r[k] for k in ("qid", "question", "title", "entities", "entity_level", "in_question_ner")}
        for r in records if r["group"] in ("lost", "all") and r["entity_level"] in ("absent", "fragment")
    ][:args.examples]
    text = json.dumps(summary, indent=1, ensure_ascii=False)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
