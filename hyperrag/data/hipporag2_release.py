"""Reader for the HippoRAG 2 release: ``<dir>/<name>.json`` (questions) and ``<dir>/<name>_corpus.json``
(a JSON list of ``{"title", "text"}`` passages; ids are their positions, ``"0"``, ``"1"``, ...), for
``musique``, ``2wikimultihopqa``, ``hotpotqa``, ``nq``, ``popqa`` and the release's ``sample`` (and CatRAG's
``hover`` in the same layout: each claim's label — ``label``, else its answer — becomes its answer and
``SUPPORTED`` / ``NOT_SUPPORTED`` its options).

The question files differ by dataset; fields are read the way HippoRAG 2's own evaluation reads them:

* id: ``id`` or ``_id`` (else the record's position).
* answers (all accepted): ``answer`` — a string or a list — (``gold_ans`` or ``reference`` in some files),
  else PopQA's ``obj`` and ``o_wiki_title``; plus ``possible_answers``, ``o_aliases`` and ``answer_aliases``
  (PopQA stores some of these as JSON-encoded lists, which are decoded).
* gold passages, matched to the corpus by title and text (whitespace-insensitive):
  - ``supporting_facts`` + ``context`` (2Wiki, HotpotQA): the context paragraph of each supporting title; by
    the title alone when the text differs but the title is unique in the corpus (or there is no context);
  - ``paragraphs`` (MuSiQue, NQ, PopQA): entries with ``is_supporting`` true, every entry when the flag is
    absent; text in ``text`` or MuSiQue's ``paragraph_text``;
  - ``supporting_titles`` (the 2Wiki split in ``../shared/data/2wiki_dev``): the titles of the gold passages,
    each the title of one corpus passage;
  - ``contexts``: entries with ``is_supporting`` true.
  A gold paragraph missing from the corpus is an error (one line naming the question and the title, exit 2).
* ``type`` and ``evidences`` (2WikiMultiHopQA): the question's type and its gold Wikidata triples
  ``[subject, relation, object]``, kept on the :class:`~hyperrag.data.types.Query`.
* ``question_decomposition`` (MuSiQue): the gold hops, read as :mod:`hyperrag.data.musique` reads them; without
  one, 2WikiMultiHopQA's ``evidences`` and ``type`` give them (:mod:`hyperrag.data.evidence_hops`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hyperrag.data.hotpotqa import context_paragraphs, supporting_titles
from hyperrag.data.hover import LABELS
from hyperrag.data.musique import _decomposition, read_musique_corpus
from hyperrag.data.records import (
    Where,
    answer_strings,
    check_text,
    get_id,
    get_list,
    get_text,
    iter_records,
    text_key,
    title_key,
)
from hyperrag.data.types import Corpus, Dataset, Query, SubQuestion
from hyperrag.errors import InputError

ID_FIELDS = ("id", "_id")
PRIMARY_ANSWER_FIELDS = ("answer", "gold_ans", "reference")
ALIAS_FIELDS = ("possible_answers", "o_aliases", "answer_aliases")


class CorpusLookup:
    """Corpus passages by (title, text) and by title, for matching a question's gold paragraphs."""

    def __init__(self, corpus: Corpus) -> None:
        self.source = corpus.source
        self.by_content: dict[tuple[str, str], str] = {}
        self.by_title: dict[str, list[str]] = {}
        for p in corpus.passages:
            self.by_content.setdefault((title_key(p.title), text_key(p.text)), p.id)
            self.by_title.setdefault(title_key(p.title), []).append(p.id)

    def find(self, title: str, text: str) -> str | None:
        return self.by_content.get((title_key(title), text_key(text)))

    def shared_title(self, title: str) -> bool:
        """Whether several corpus passages carry ``title`` (why a title names no unique passage)."""
        return len(self.by_title.get(title_key(title), [])) > 1

    def unique_title(self, title: str) -> str | None:
        ids = self.by_title.get(title_key(title), [])
        return ids[0] if len(ids) == 1 else None


def release_answers(rec: dict[str, Any], where: Where) -> tuple[str, ...]:
    """Every accepted answer string of a record (see the module docstring for the fields)."""
    primary = next((k for k in PRIMARY_ANSWER_FIELDS if k in rec), None)
    fields = [primary] if primary else [k for k in ("obj", "o_wiki_title") if k in rec]
    answers: list[str] = []
    for key in [*fields, *(k for k in ALIAS_FIELDS if k in rec)]:
        value = rec[key]
        if isinstance(value, str) and value.lstrip().startswith("["):  # PopQA: a list stored as JSON text
            try:
                value = json.loads(value)
            except ValueError:
                raise where.error("looks like a JSON-encoded list but does not parse", key) from None
        answers += answer_strings(value, where, key)
    return tuple(dict.fromkeys(answers))


def paragraph_gold(rec: dict[str, Any], key: str, where: Where, lookup: CorpusLookup,
                   supporting_by_default: bool) -> tuple[list[str], dict[int, str]]:
    """Gold ids from a list of paragraph objects, and each supporting paragraph's position → its id."""
    gold: list[str] = []
    positions: dict[int, str] = {}
    for j, para in enumerate(get_list(rec, key, where)):
        field = f"{key}[{j}]"
        if not isinstance(para, dict):
            raise where.error("expected a JSON object", field)
        if not para.get("is_supporting", supporting_by_default):
            continue
        title = check_text(para.get("title", ""), where, f"{field}.title", allow_empty=True)
        text_field = "text" if "text" in para else "paragraph_text"
        if text_field not in para:
            raise where.error("missing required field", f"{field}.text")
        pid = lookup.find(title, check_text(para[text_field], where, f"{field}.{text_field}"))
        if pid is None:
            raise where.error(f"supporting paragraph {title!r} not found in corpus {lookup.source}", field)
        gold.append(pid)
        positions[j] = pid
    return gold, positions


def fact_gold(rec: dict[str, Any], where: Where, lookup: CorpusLookup) -> list[str]:
    """Gold ids from ``supporting_facts``: each title's context paragraph, else the title if unique."""
    texts: dict[str, list[str]] = {}
    for title, text in context_paragraphs(rec, where, required=False):
        texts.setdefault(title_key(title), []).append(text)
    gold: list[str] = []
    for field, title in supporting_titles(rec, where):
        found = [pid for text in texts.get(title_key(title), []) if (pid := lookup.find(title, text))]
        if not found:
            pid = lookup.unique_title(title)
            if pid is None:
                why = " (several passages have this title; none has the context's text)" if lookup.shared_title(
                    title) else ""
                raise where.error(f"supporting fact title {title!r} not found in corpus {lookup.source}{why}",
                                  field)
            found = [pid]
        gold += found
    return gold


def title_gold(rec: dict[str, Any], qid: str, where: Where, lookup: CorpusLookup) -> list[str]:
    """Gold ids from ``supporting_titles``: each title names exactly one corpus passage."""
    gold: list[str] = []
    for j, title in enumerate(get_list(rec, "supporting_titles", where)):
        field = f"supporting_titles[{j}]"
        title = check_text(title, where, field)
        pid = lookup.unique_title(title)
        if pid is None:
            why = "is the title of several passages" if lookup.shared_title(title) else "not found"
            raise where.error(f"question {qid!r}: supporting title {title!r} {why} in corpus {lookup.source}",
                              field)
        gold.append(pid)
    return gold


def release_evidences(rec: dict[str, Any], where: Where) -> tuple[tuple[str, str, str], ...]:
    """2WikiMultiHopQA's ``evidences``: ``[subject, relation, object]`` triples (absent → none)."""
    triples: list[tuple[str, str, str]] = []
    for j, triple in enumerate(get_list(rec, "evidences", where)):
        field = f"evidences[{j}]"
        if not (isinstance(triple, list) and len(triple) == 3):
            raise where.error("expected [subject, relation, object]", field)
        s, r, o = (check_text(x, where, field, allow_empty=True).strip() for x in triple)
        triples.append((s, r, o))
    return tuple(triples)


def evidence_hops(rec: dict[str, Any], qtype: str, evidences: tuple[tuple[str, str, str], ...], gold: list[str],
                  corpus: Corpus) -> tuple[SubQuestion, ...]:
    """2WikiMultiHopQA's gold hops from its evidence triples (:mod:`hyperrag.data.evidence_hops`), each hop's
    passage one of the question's gold passages."""
    from hyperrag.data.evidence_hops import evidence_decomposition

    passages = [corpus[corpus.position(pid)] for pid in dict.fromkeys(gold)]
    titles = [p.title for p in passages]
    answer = str(rec.get("answer") or "")
    return evidence_decomposition(rec["question"], answer, qtype, evidences, titles,
                                  {p.title: p.id for p in passages}, {p.title: p.text for p in passages})


def release_label(rec: dict[str, Any], where: Where, labels: tuple[str, ...]) -> int:
    """The position in ``labels`` of a labelled record's label (HoVer: ``label``, else its answer), compared
    upper-case with spaces as underscores (``not supported`` → ``NOT_SUPPORTED``)."""
    key = "label" if "label" in rec else next((k for k in PRIMARY_ANSWER_FIELDS if k in rec), "label")
    raw = rec.get(key)
    value = raw[0] if isinstance(raw, list) and raw else raw
    if not isinstance(value, str) or value.strip().upper().replace(" ", "_") not in labels:
        raise where.error(f"expected one of {list(labels)}, got {raw!r}", key)
    return labels.index(value.strip().upper().replace(" ", "_"))


def read_release_queries(path: Path, corpus: Corpus, label_options: tuple[str, ...] = ()) -> list[Query]:
    """The questions of a release file; with ``label_options`` (HoVer's ``SUPPORTED`` / ``NOT_SUPPORTED``) each
    record's label is its answer and the labels are its options: the reader picks one, ``accuracy`` scores it."""
    lookup = CorpusLookup(corpus)
    queries: list[Query] = []
    seen: set[str] = set()
    for where, rec in iter_records(path):
        position = where.record if where.record is not None else where.line
        qid = get_id(rec, ID_FIELDS, where, default=str(position))
        if qid in seen:
            raise where.error(f"duplicate id {qid!r}", next((k for k in ID_FIELDS if k in rec), None))
        seen.add(qid)
        question = get_text(rec, "question", where)
        positions: dict[int, str] = {}
        if "supporting_facts" in rec:
            gold = fact_gold(rec, where, lookup)
        elif "supporting_titles" in rec:
            gold = title_gold(rec, qid, where, lookup)
        elif "paragraphs" in rec:
            gold, positions = paragraph_gold(rec, "paragraphs", where, lookup, supporting_by_default=True)
        else:
            gold, _ = paragraph_gold(rec, "contexts", where, lookup, supporting_by_default=False)
        hops = _decomposition(rec.get("question_decomposition"), positions, path=path, record=where.record)
        evidences = release_evidences(rec, where)
        qtype = check_text(rec["type"], where, "type").strip() if rec.get("type") is not None else ""
        if not hops and evidences and gold:  # 2WikiMultiHopQA: the hops from its evidence triples
            hops = evidence_hops(rec, qtype, evidences, gold, corpus)
        if label_options:
            index = release_label(rec, where, label_options)
            queries.append(Query(qid, question, (label_options[index],), tuple(dict.fromkeys(gold)), hops,
                                 options=label_options, answer_index=index))
            continue
        queries.append(Query(qid, question, release_answers(rec, where), tuple(dict.fromkeys(gold)), hops,
                             type=qtype, evidences=evidences))
    if not queries:
        raise InputError("no questions in file", path=path)
    return queries


def read_hipporag2_release(directory: str | Path, name: str, openie: str | Path | None = None) -> Dataset:
    """Args:
        directory: the folder holding the release's files.
        name: the dataset's file stem (``musique``, ``2wikimultihopqa``, ``hotpotqa``, ``nq``, ``popqa``...).
        openie: an optional OpenIE file (HippoRAG format, ``docs[i]`` ↔ ``corpus[i]``).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("dataset directory not found", path=directory)
    corpus = read_musique_corpus(directory / f"{name}_corpus.json")
    # CatRAG's HoVer subset: the claim's label is the answer, SUPPORTED / NOT_SUPPORTED its options (Table 3's accuracy)
    queries = read_release_queries(directory / f"{name}.json", corpus, LABELS if name == "hover" else ())
    openie_path = Path(openie) if openie else None
    if openie_path is not None and not openie_path.is_file():
        raise InputError("OpenIE file not found", path=openie_path)
    return Dataset(name, corpus, queries, openie_path)
