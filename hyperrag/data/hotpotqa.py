"""Reader for HotpotQA's own files (train, dev distractor, dev fullwiki): a JSON list of records
``{"_id", "question", "answer", "supporting_facts": [[title, sentence index], ...],
"context": [[title, [sentence, ...]], ...], "type", "level"}``.

The corpus is the union of the records' context paragraphs, deduplicated by title and text (ids are their
positions, ``"0"``, ``"1"``, ...); a question's gold passages are its own context paragraphs whose titles
its supporting facts name. ``type`` and ``level`` are not used. :func:`context_paragraphs` and
:func:`supporting_titles` also read 2WikiMultiHopQA/HotpotQA records of the HippoRAG 2 release and HoVer
claims, which share these fields.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from hyperrag.data.records import (
    Where,
    answer_strings,
    check_text,
    get_id,
    get_list,
    get_text,
    iter_records,
    join_sentences,
    text_key,
    title_key,
)
from hyperrag.data.types import Corpus, Dataset, Passage, Query
from hyperrag.errors import InputError

ID_FIELDS = ("_id", "id")


def context_paragraphs(rec: dict[str, Any], where: Where, *, required: bool) -> list[tuple[str, str]]:
    """``context`` as ``(title, text)`` pairs, a paragraph's text being its sentences joined."""
    out = []
    for j, item in enumerate(get_list(rec, "context", where, required=required)):
        field = f"context[{j}]"
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], list)):
            raise where.error("expected [title, [sentence, ...]]", field)
        title = check_text(item[0], where, field)
        sentences = [check_text(s, where, field, allow_empty=True) for s in item[1]]
        out.append((title, join_sentences(sentences)))
    return out


def supporting_titles(rec: dict[str, Any], where: Where) -> list[tuple[str, str]]:
    """``(field, title)`` for each distinct title that ``supporting_facts`` ([title, sentence index]
    pairs) names, in order of first mention; ``field`` locates its first mention for error messages."""
    seen: dict[str, str] = {}
    for j, fact in enumerate(get_list(rec, "supporting_facts", where)):
        field = f"supporting_facts[{j}]"
        if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[1], int)
                and not isinstance(fact[1], bool)):
            raise where.error("expected [title, sentence index]", field)
        seen.setdefault(check_text(fact[0], where, field), field)
    return [(field, title) for title, field in seen.items()]


def read_hotpotqa(path: str | Path, name: str = "hotpotqa") -> Dataset:
    """Questions and the corpus of their context paragraphs from one HotpotQA file."""
    path = Path(path)
    passages: list[Passage] = []
    by_content: dict[tuple[str, str], str] = {}
    queries: list[Query] = []
    seen: set[str] = set()
    records = iter_records(path)
    head = list(itertools.islice(records, 2))
    if len(head) == 1 and head[0][0].line is not None and "question" not in head[0][1]:
        # one JSON object where HotpotQA has a list of them (a lone JSONL record would hold a question)
        keys = ", ".join(repr(k)[:40] for k in list(head[0][1])[:5]) or "none"
        raise InputError("expected a JSON list of HotpotQA records ([{\"_id\", \"question\", ...}, ...]), got "
                         f"one JSON object (keys: {keys})", path=path)
    for where, rec in itertools.chain(head, records):
        position = where.record if where.record is not None else where.line
        qid = get_id(rec, ID_FIELDS, where, default=str(position))
        if qid in seen:
            raise where.error(f"duplicate id {qid!r}", "_id" if "_id" in rec else "id")
        seen.add(qid)
        question = get_text(rec, "question", where)
        answers = answer_strings(rec.get("answer"), where, "answer")
        ids_by_title: dict[str, list[str]] = {}
        for title, text in context_paragraphs(rec, where, required=True):
            if not text:  # nothing to retrieve; a supporting paragraph without text fails below
                continue
            key = (title_key(title), text_key(text))
            pid = by_content.get(key)
            if pid is None:
                pid = by_content[key] = str(len(passages))
                passages.append(Passage(pid, title, text))
            ids_by_title.setdefault(title_key(title), []).append(pid)
        gold: list[str] = []
        for field, title in supporting_titles(rec, where):
            ids = ids_by_title.get(title_key(title))
            if not ids:
                raise where.error(f"supporting fact title {title!r} names no non-empty paragraph of this "
                                  "record's context", field)
            gold.extend(ids)
        queries.append(Query(qid, question, tuple(answers), tuple(dict.fromkeys(gold))))
    if not queries:
        raise InputError("no questions in file", path=path)
    if not passages:
        raise InputError("no context paragraph has any text: the corpus would be empty", path=path)
    return Dataset(name, Corpus(passages, source=str(path)), queries)
