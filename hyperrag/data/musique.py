"""Reader for MuSiQue-style directories: ``queries.json``, ``corpus.json``, optional ``openie_*.json``.

Passage ids are the corpus positions as strings ("0", "1", ...). Gold passages are the query's
paragraphs with ``is_supporting: true``, matched to corpus entries by title and text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hyperrag.data.jsonl import encodable, parse_json_text
from hyperrag.data.types import Corpus, Dataset, Passage, Query, SubQuestion
from hyperrag.errors import InputError


def load_json(path: Path) -> Any:
    if not path.is_file():
        raise InputError("file not found", path=path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")  # a BOM may open the file
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {err.start})", path=path, line=line) from None
    if not text.strip():
        raise InputError("file is empty", path=path)
    return parse_json_text(text, path=path)


def _field(rec: Any, key: str, kind: type | tuple[type, ...], *, path: Path, record: int) -> Any:
    if not isinstance(rec, dict):
        raise InputError("expected a JSON object", path=path, record=record)
    if key not in rec:
        raise InputError("missing required field", path=path, record=record, field=key)
    value = rec[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        expected = " or ".join(k.__name__ for k in kinds)
        raise InputError(f"expected {expected}, got {type(value).__name__}", path=path, record=record, field=key)
    if isinstance(value, str) and not encodable(value):
        raise InputError("contains an unpaired surrogate escape (not valid Unicode text)", path=path, record=record,
                         field=key)
    return value


def _norm(text: str) -> str:
    return " ".join(text.split())


def read_musique_corpus(path: Path) -> Corpus:
    records = load_json(path)
    if not isinstance(records, list):
        raise InputError("expected a JSON list of passages", path=path)
    if not records:
        raise InputError("corpus is empty", path=path)
    passages = []
    for i, rec in enumerate(records):
        title = _field(rec, "title", str, path=path, record=i)
        text = _field(rec, "text", str, path=path, record=i)
        if not text.strip():
            raise InputError("must not be empty", path=path, record=i, field="text")
        passages.append(Passage(str(i), title, text))
    return Corpus(passages, source=str(path))


def read_musique_queries(path: Path, corpus: Corpus) -> list[Query]:
    records = load_json(path)
    if not isinstance(records, list) or not records:
        raise InputError("expected a non-empty JSON list of queries", path=path)
    by_content = {(_norm(p.title), _norm(p.text)): p.id for p in corpus.passages}
    queries: list[Query] = []
    seen: set[str] = set()
    for i, rec in enumerate(records):
        qid = str(_field(rec, "id", (str, int), path=path, record=i))
        if qid in seen:
            raise InputError(f"duplicate id {qid!r}", path=path, record=i, field="id")
        seen.add(qid)
        question = _field(rec, "question", str, path=path, record=i)
        answer = rec.get("answer")
        aliases = rec.get("answer_aliases") or []
        answers = tuple(str(a) for a in ([answer] if answer is not None else []) + list(aliases))
        gold: list[str] = []
        paragraph_ids: dict[int, str] = {}  # paragraph position -> corpus id (supporting paragraphs)
        for j, para in enumerate(_field(rec, "paragraphs", list, path=path, record=i)):
            if not isinstance(para, dict):
                raise InputError("expected a JSON object", path=path, record=i, field=f"paragraphs[{j}]")
            if not para.get("is_supporting"):
                continue
            key = (_norm(str(para.get("title", ""))), _norm(str(para.get("paragraph_text", ""))))
            if key not in by_content:
                raise InputError(f"supporting paragraph {para.get('title')!r} not found in corpus {corpus.source}",
                                 path=path, record=i, field=f"paragraphs[{j}]")
            gold.append(by_content[key])
            paragraph_ids[j] = by_content[key]
        hops = _decomposition(rec.get("question_decomposition"), paragraph_ids, path=path, record=i)
        queries.append(Query(qid, question, answers, tuple(dict.fromkeys(gold)), hops))
    return queries


def _decomposition(raw: Any, paragraph_ids: dict[int, str], *, path: Path, record: int) -> tuple[SubQuestion, ...]:
    """MuSiQue's ``question_decomposition`` as sub-questions; a hop's passage is its supporting paragraph."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError("expected a JSON list", path=path, record=record, field="question_decomposition")
    hops = []
    for j, hop in enumerate(raw):
        where = f"question_decomposition[{j}]"
        if not isinstance(hop, dict) or not isinstance(hop.get("question"), str):
            raise InputError("expected an object with a 'question' string", path=path, record=record, field=where)
        support = hop.get("paragraph_support_idx")
        gold_id = paragraph_ids.get(support) if isinstance(support, int) and not isinstance(support, bool) else None
        hops.append(SubQuestion(hop["question"], str(hop.get("answer") or ""), gold_id))
    return tuple(hops)


def read_musique_dir(directory: str | Path, name: str = "musique") -> Dataset:
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("dataset directory not found", path=directory)
    corpus = read_musique_corpus(directory / "corpus.json")
    queries = read_musique_queries(directory / "queries.json", corpus)
    openie = sorted(directory.glob("openie_*.json"))
    return Dataset(name, corpus, queries, openie[0] if openie else None)
