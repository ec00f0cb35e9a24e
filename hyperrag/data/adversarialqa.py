"""Reader for AdversarialQA (Bartolo et al., 2020), in the layout it is released in: SQuAD v1.1 JSON.

    {"version": ..., "data": [{"title": str, "paragraphs": [{"context": str,
        "qas": [{"id": str, "question": str, "answers": [{"text": str, "answer_start": int}, ...]}, ...]}, ...]}, ...]}

Every paragraph is a passage (id ``<article>-<paragraph>`` by position, its article's title as the title; a context
repeated verbatim is kept once); every question is a query whose gold passage is its paragraph and whose answers are
the distinct answer texts. The release's ``dev.json`` files (``combined/``, ``dbidaf/``, ``dbert/``, ``droberta/``)
all read the same way. Bad input stops with one line naming the file and the field path
(``data[0].paragraphs[2].qas[1].question``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hyperrag.data.musique import load_json
from hyperrag.data.records import Where, check_text
from hyperrag.data.types import Corpus, Dataset, Passage, Query
from hyperrag.errors import InputError


def _list(node: dict[str, Any], key: str, path: Path, where: str) -> list[Any]:
    value = node.get(key)
    if not isinstance(value, list):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise InputError(f"expected a list, got {found}", path=path, field=f"{where}.{key}" if where else key)
    return value


def _text(node: dict[str, Any], key: str, path: Path, where: str, *, allow_empty: bool = False) -> str:
    value = node.get(key)
    if not isinstance(value, str):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise InputError(f"expected a string, got {found}", path=path, field=f"{where}.{key}")
    return check_text(value, Where(path), f"{where}.{key}", allow_empty=allow_empty)


def _object(value: Any, path: Path, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, got {type(value).__name__}", path=path, field=where)
    return value


def read_adversarialqa(path: str | Path, name: str = "adversarialqa") -> Dataset:
    """Read one AdversarialQA (SQuAD-format) file.

    Raises:
        InputError: not SQuAD-format JSON, a field missing or of the wrong type, a duplicate question id, a question
            without answers, or no question at all.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    root = load_json(path)
    if not isinstance(root, dict):
        raise InputError(f"expected a SQuAD-format JSON object with a 'data' list, got {type(root).__name__}",
                         path=path)
    passages: list[Passage] = []
    by_context: dict[str, str] = {}
    queries: list[Query] = []
    seen: set[str] = set()
    for a, raw_article in enumerate(_list(root, "data", path, "")):
        where_a = f"data[{a}]"
        article = _object(raw_article, path, where_a)
        title = _text(article, "title", path, where_a, allow_empty=True) if "title" in article else ""
        for p, raw_paragraph in enumerate(_list(article, "paragraphs", path, where_a)):
            where_p = f"{where_a}.paragraphs[{p}]"
            paragraph = _object(raw_paragraph, path, where_p)
            context = _text(paragraph, "context", path, where_p)
            pid = by_context.get(context)
            if pid is None:
                pid = by_context[context] = f"{a}-{p}"
                passages.append(Passage(pid, title.replace("_", " "), context))
            for k, raw_qa in enumerate(_list(paragraph, "qas", path, where_p)):
                where_q = f"{where_p}.qas[{k}]"
                qa = _object(raw_qa, path, where_q)
                qid = _text(qa, "id", path, where_q)
                if qid in seen:
                    raise InputError(f"duplicate question id {qid!r}", path=path, field=f"{where_q}.id")
                seen.add(qid)
                question = _text(qa, "question", path, where_q)
                answers = []
                for j, raw_answer in enumerate(_list(qa, "answers", path, where_q)):
                    answers.append(_text(_object(raw_answer, path, f"{where_q}.answers[{j}]"), "text", path,
                                         f"{where_q}.answers[{j}]"))
                if not answers:
                    raise InputError("a question needs at least one answer", path=path, field=f"{where_q}.answers")
                queries.append(Query(qid, question.strip(), tuple(dict.fromkeys(a.strip() for a in answers)),
                                     (pid,)))
    if not queries:
        raise InputError("no questions in file", path=path)
    return Dataset(name, Corpus(passages, source=str(path)), queries)


__all__ = ["read_adversarialqa"]
