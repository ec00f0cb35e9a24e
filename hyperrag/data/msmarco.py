"""MS MARCO question answering (Bajaj et al., 2018) as HugRAG's Table 4 uses it: questions, their answers, and a
corpus made of the passages the file gives with each question (the ``is_selected`` ones are gold).

Reads the QnA release as published (``dev_v2.1.json``: one JSON object of columns ``query``, ``query_id``,
``passages``, ``answers``, optionally ``wellFormedAnswers``, each keyed by the row number), or the same rows as a
JSON list / JSONL of records ``{"query_id", "query", "passages": [{"passage_text", "is_selected", "url"}],
"answers"}``. Questions whose only answer is ``No Answer Present.`` are left out (counted in the log). Identical
passage texts share one passage id (``msmarco-<n>``, in order of first appearance).

    ds = read_msmarco("paper_data/msmarco.json")
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hyperrag.data.musique import load_json
from hyperrag.data.records import Where, check_text, iter_records, looks_like_json_list
from hyperrag.data.types import Corpus, Dataset, Passage, Query
from hyperrag.errors import InputError

log = logging.getLogger(__name__)
NO_ANSWER = "No Answer Present."


def _rows(path: Path) -> list[tuple[Where, dict[str, Any]]]:
    """The file's rows as records, from the columnar release or a list / JSONL of records."""
    if looks_like_json_list(path) or path.suffix == ".jsonl":
        return list(iter_records(path))

    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("query"), dict):
        raise InputError("expected MS MARCO's columnar JSON (keys query, passages, answers) or a list of records",
                         path=path)
    rows = []
    for i, key in enumerate(data["query"]):
        rec = {col: values.get(key) for col, values in data.items() if isinstance(values, dict)}
        rows.append((Where(path, record=i), rec))
    return rows


def read_msmarco(path: str | Path, name: str = "msmarco") -> Dataset:
    """Args:
        path: the MS MARCO QnA file (see the module docstring).
        name: the dataset's name.
    Raises:
        InputError: a missing field or a malformed row (naming the file, record or line and field).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    passages: list[Passage] = []
    ids: dict[str, str] = {}
    queries: list[Query] = []
    skipped = 0
    for where, rec in _rows(path):
        question = check_text(rec.get("query"), where, "query")
        qid = str(rec.get("query_id", where.record if where.record is not None else where.line))
        raw = rec.get("passages")
        if not isinstance(raw, list):
            raise where.error("expected a list of passages", "passages")
        gold = []
        for j, p in enumerate(raw):
            if not isinstance(p, dict):
                raise where.error(f"passage {j}: expected an object", "passages")
            text = check_text(p.get("passage_text"), where, f"passages[{j}].passage_text")
            pid = ids.get(text)
            if pid is None:
                pid = ids[text] = f"msmarco-{len(ids)}"
                passages.append(Passage(pid, "", text))
            if int(p.get("is_selected") or 0):
                gold.append(pid)
        given = [rec.get(key) for key in ("answers", "wellFormedAnswers")]  # wellFormedAnswers "[]": none
        answers = [a.strip() for col in given if isinstance(col, list) for a in col
                   if isinstance(a, str) and a.strip() and a.strip() != NO_ANSWER]
        if not answers:
            skipped += 1
            continue
        queries.append(Query(qid, question, tuple(dict.fromkeys(answers)), tuple(dict.fromkeys(gold))))
    if skipped:
        log.info("%s: %d questions without an answer (%r) left out", path, skipped, NO_ANSWER)
    if not queries:
        raise InputError("no answered questions in file", path=path)
    return Dataset(name, Corpus(passages, source=str(path)), queries)
