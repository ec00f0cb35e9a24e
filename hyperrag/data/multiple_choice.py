"""Reader for multiple-choice QA files (CosmosQA, MedQA, MedMCQA and a generic form), JSONL or a JSON list.

Generic record: ``{"id", "question", "options": [text, ...] or {"A": text, ...}, "answer_index": int,
"context" (optional), "gold_ids": [passage id] (optional)}``. The datasets' own field names are read too:

* MedMCQA: options ``opa``..``opd``, correct option ``cop``, counted from ``cop_base`` (0 in the Hugging Face
  export, 1 in the original release); ``-1`` or no ``cop`` (the test split) = unknown.
* MedQA: ``options`` ``{"A": ..., ...}`` and the correct letter ``answer_idx`` (its text in ``answer``).
* CosmosQA: ``context``, options ``answer0``..``answer3``, correct ``label`` (0-based; an integer or a digit
  string; ``-1`` = unknown).
* otherwise ``answer``: an option's letter or key, or an option's text.

Passages come from the optional corpus file (``{"id" (optional), "title" (optional), "text"}``, JSON list or
JSONL) and from the records' own ``context`` texts (deduplicated, ids ``ctx0``, ``ctx1``, ...; a context is
the gold passage of its questions). ``gold_ids`` must name passages of the corpus file. A query's answer is
the correct option's text, so EM/F1 apply as well as ``accuracy``.
"""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any

from hyperrag.data.records import (
    Where,
    check_text,
    get_id,
    get_list,
    get_text,
    iter_records,
    read_title_text_corpus,
    text_key,
)
from hyperrag.data.types import Corpus, Dataset, Passage, Query
from hyperrag.errors import InputError

LETTERS = string.ascii_uppercase
ID_FIELDS = ("id", "_id", "qid")
MEDMCQA_OPTIONS = tuple(f"op{c}" for c in "abcdefgh")
COSMOSQA_OPTIONS = tuple(f"answer{i}" for i in range(10))
DIGITS = re.compile(r"\s*-?\d{1,9}\s*")


def _numbered(rec: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """The leading run of ``names`` present in ``rec`` (``opa, opb, ...`` or ``answer0, answer1, ...``)."""
    present = []
    for n in names:
        if n not in rec:
            break
        present.append(n)
    return present


def read_options(rec: dict[str, Any], where: Where) -> tuple[list[str], list[str]]:
    """``(texts, keys)``: option texts in order and the key each is named by (``A``.. or the dict key)."""
    if "options" in rec:
        raw = rec["options"]
        if isinstance(raw, list):
            keys = list(LETTERS[: len(raw)])
            texts = [check_text(o, where, f"options[{j}]") for j, o in enumerate(raw)]
        elif isinstance(raw, dict):
            keys = [str(k) for k in raw]
            texts = [check_text(v, where, f"options.{k}") for k, v in raw.items()]
        else:
            raise where.error(f"expected a list or an object of options, got {type(raw).__name__}", "options")
    else:
        fields = _numbered(rec, MEDMCQA_OPTIONS) or _numbered(rec, COSMOSQA_OPTIONS)
        if not fields:
            raise where.error("missing required field (or opa..opd, or answer0..answer3)", "options")
        keys = list(LETTERS[: len(fields)])
        texts = [check_text(rec[f], where, f) for f in fields]
    if len(texts) < 2:
        raise where.error(f"a multiple-choice question needs at least two options, got {len(texts)}", "options")
    if len(texts) > len(LETTERS):
        raise where.error(f"at most {len(LETTERS)} options are supported, got {len(texts)}", "options")
    return texts, keys


def _integer(value: Any, where: Where, field: str) -> int:
    """An integer, or a string of digits (CosmosQA's CSV-born labels)."""
    if isinstance(value, str) and DIGITS.fullmatch(value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"expected an integer, got {type(value).__name__}", field)
    return value


def correct_index(rec: dict[str, Any], texts: list[str], keys: list[str], where: Where, cop_base: int) -> int | None:
    """Position of the correct option, from the first answer field present; ``None`` when unknown."""
    n = len(texts)

    def in_range(i: int, field: str, hint: str = "") -> int:
        if not 0 <= i < n:
            raise where.error(f"answer index {i} is out of range for {n} options{hint}", field)
        return i

    if rec.get("answer_index") is not None:
        return in_range(_integer(rec["answer_index"], where, "answer_index"), "answer_index")
    for field, base in (("cop", cop_base), ("label", 0)):
        if rec.get(field) is not None:
            value = _integer(rec[field], where, field)
            if value == -1:  # the convention for an unreleased answer (test splits)
                return None
            hint = f" (cop counted from data.cop_base={cop_base})" if field == "cop" else ""
            return in_range(value - base, field, hint)
    for field in ("answer_idx", "answer"):
        value = rec.get(field)
        if value is None:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            return in_range(value, field)
        value = check_text(value, where, field)
        if value.strip() in keys:
            return keys.index(value.strip())
        if field == "answer" and value.strip() in [t.strip() for t in texts]:
            return [t.strip() for t in texts].index(value.strip())
        raise where.error(f"{value!r} is neither an option key {keys} nor an option's text", field)
    return None


def read_multiple_choice(queries: str | Path, corpus: str | Path | Corpus | None = None,
                         name: str = "multiple_choice", *, cop_base: int) -> Dataset:
    """Args:
        queries: the question file.
        corpus: an optional passage file (or an already read :class:`Corpus`, e.g. a knowledge base built from a
            release's own texts); without one the passages are the records' ``context`` texts.
        cop_base: what MedMCQA's ``cop`` counts from (0 or 1).
    """
    path = Path(queries)
    if cop_base not in (0, 1):
        raise InputError(f"cop_base must be 0 or 1, got {cop_base!r}", field="data.cop_base")
    base: Corpus | None = corpus if isinstance(corpus, Corpus) else (read_title_text_corpus(corpus) if corpus
                                                                      else None)
    passages: list[Passage] = list(base.passages) if base is not None else []
    context_ids: dict[str, str] = {}
    out: list[Query] = []
    seen: set[str] = set()
    for where, rec in iter_records(path):
        position = where.record if where.record is not None else where.line
        qid = get_id(rec, ID_FIELDS, where, default=str(position))
        if qid in seen:
            raise where.error(f"duplicate id {qid!r}", next((k for k in ID_FIELDS if k in rec), None))
        seen.add(qid)
        question = get_text(rec, "question", where)
        texts, keys = read_options(rec, where)
        answer_index = correct_index(rec, texts, keys, where, cop_base)
        gold = [str(g) for g in get_list(rec, "gold_ids", where)]
        if not all(isinstance(g, (str, int)) and not isinstance(g, bool) for g in rec.get("gold_ids") or []):
            raise where.error("expected a list of passage ids", "gold_ids")
        unknown = [g for g in gold if base is None or g not in base]
        if unknown:
            raise where.error(f"unknown passage id(s) {unknown[:3]} not in corpus "
                              f"{base.source if base is not None else '(no corpus file given)'}", "gold_ids")
        if rec.get("context") is not None:
            context = check_text(rec["context"], where, "context")
            pid = context_ids.get(text_key(context))
            if pid is None:
                pid = context_ids[text_key(context)] = f"ctx{len(context_ids)}"
                if base is not None and pid in base:
                    raise where.error(f"context passage id {pid!r} is taken by the corpus file {base.source}",
                                      "context")
                passages.append(Passage(pid, "", context))
            gold.insert(0, pid)
        answers = (texts[answer_index],) if answer_index is not None else ()
        out.append(Query(qid, question, answers, tuple(dict.fromkeys(gold)), options=tuple(texts),
                         answer_index=answer_index))
    if not out:
        raise InputError("no questions in file", path=path)
    if not passages:
        raise InputError("no passages to retrieve from: give a corpus file (data.corpus) or records with a "
                         "'context'", path=path)
    return Dataset(name, Corpus(passages, source=base.source if base is not None else str(path)), out)
