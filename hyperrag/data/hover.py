"""Reader for HoVer claim files plus a separate passage corpus.

Claims (HoVer's ``hover_{train,dev}_release_v1.1.json``, a JSON list; JSONL is read too):
``{"uid", "claim", "supporting_facts": [[title, sentence id], ...], "label": "SUPPORTED" | "NOT_SUPPORTED",
"num_hops"}``. HoVer's Wikipedia corpus ships apart from the claims, so the corpus is a second file of
``{"id" (optional), "title", "text"}`` passages (JSON list or JSONL). The claim is the question, the label the
answer; with ``label_options`` the two labels are also the query's options, so the QA reader must pick one and
``accuracy`` scores it. Gold passages are the corpus passages whose titles the supporting facts name (titles
compared after Unicode NFC normalisation: HoVer's wiki dump stores NFD titles).
"""

from __future__ import annotations

from pathlib import Path

from hyperrag.data.hotpotqa import supporting_titles
from hyperrag.data.records import (
    check_text,
    get_id,
    get_text,
    iter_records,
    read_title_text_corpus,
    title_key,
)
from hyperrag.data.types import Corpus, Dataset, Query
from hyperrag.errors import InputError

LABELS = ("SUPPORTED", "NOT_SUPPORTED")
ID_FIELDS = ("uid", "id")


def read_hover_claims(path: str | Path, corpus: Corpus, *, label_options: bool) -> list[Query]:
    """Claims as queries; gold ids are checked against ``corpus``."""
    path = Path(path)
    ids_by_title: dict[str, list[str]] = {}
    for p in corpus.passages:
        ids_by_title.setdefault(title_key(p.title), []).append(p.id)
    queries: list[Query] = []
    seen: set[str] = set()
    for where, rec in iter_records(path):
        position = where.record if where.record is not None else where.line
        qid = get_id(rec, ID_FIELDS, where, default=str(position))
        if qid in seen:
            raise where.error(f"duplicate id {qid!r}", next((k for k in ID_FIELDS if k in rec), None))
        seen.add(qid)
        claim = get_text(rec, "claim", where)
        label = None
        if rec.get("label") is not None:
            raw = check_text(rec["label"], where, "label")
            label = raw.strip().upper().replace(" ", "_")
            if label not in LABELS:
                raise where.error(f"expected one of {list(LABELS)}, got {raw!r}", "label")
        gold: list[str] = []
        for field, title in supporting_titles(rec, where):
            ids = ids_by_title.get(title_key(title))
            if not ids:
                raise where.error(f"supporting fact title {title!r} not found in corpus {corpus.source}", field)
            gold += ids
        answers = (label,) if label else ()
        options = LABELS if label_options else ()
        answer_index = LABELS.index(label) if label_options and label else None
        queries.append(Query(qid, claim, answers, tuple(dict.fromkeys(gold)), options=options,
                             answer_index=answer_index))
    if not queries:
        raise InputError("no claims in file", path=path)
    return queries


def read_hover(claims: str | Path, corpus: str | Path, name: str = "hover", *, label_options: bool) -> Dataset:
    """Args:
        claims: HoVer's claim file.
        corpus: passages with titles (JSON list or JSONL).
        label_options: offer ``SUPPORTED`` / ``NOT_SUPPORTED`` as the query's options.
    """
    passages = read_title_text_corpus(corpus, require_title=True)
    return Dataset(name, passages, read_hover_claims(claims, passages, label_options=label_options))
