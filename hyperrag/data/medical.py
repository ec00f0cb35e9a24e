"""The knowledge bases CDF-RAG's medical datasets retrieve from, read from their own releases.

The paper retrieves from "a vector database" and builds its causal graph from "each dataset" (Appendix A.1) without
naming an outside knowledge base. MedQA and MedMCQA questions carry no passage, so the corpus is each release's own
knowledge text:

* **MedQA** (Jin et al., 2021): the release's English medical textbooks (``data_clean/textbooks/en/*.txt``, the
  18 textbooks the MedQA authors ship as its retrieval corpus), cut into passages of at most ``chunk_words`` words
  at paragraph, sentence or word boundaries (semchunk); passage ids ``<textbook>#<k>``;
* **MedMCQA** (Pal et al., 2022): the expert explanations (``exp``) of the release's *train* split — the dev
  questions scored are not among them, so no dev question's own explanation can be retrieved; passage ids
  ``exp-<id>``, titles ``<subject> / <topic>``.
"""

from __future__ import annotations

from pathlib import Path

from hyperrag.data.records import check_text, get_id, iter_records
from hyperrag.data.types import Corpus, Passage
from hyperrag.errors import InputError


def textbook_corpus(directory: str | Path, chunk_words: int) -> Corpus:
    """Every ``*.txt`` textbook under ``directory`` (sorted by name) cut into passages of at most ``chunk_words``
    words.

    Raises:
        InputError: no textbook, a textbook that is not UTF-8 text, or ``chunk_words`` < 1.
    """
    import semchunk

    directory = Path(directory)
    if chunk_words < 1:
        raise InputError(f"must be >= 1, got {chunk_words}", setting="data.chunk_words")
    books = sorted(directory.glob("*.txt")) if directory.is_dir() else []
    if not books:
        raise InputError("no textbook (*.txt) in the directory", path=directory)
    chunker = semchunk.chunkerify(lambda text: len(text.split()), chunk_words)
    passages: list[Passage] = []
    for book in books:
        try:
            text = book.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise InputError(f"not UTF-8 text ({err.reason} at byte {err.start})", path=book) from None
        pieces = [p.strip() for p in chunker(text) if p.strip()]
        passages.extend(Passage(f"{book.stem}#{k}", book.stem, piece) for k, piece in enumerate(pieces))
    if not passages:
        raise InputError("the textbooks hold no text", path=directory)
    return Corpus(passages, source=str(directory))


def explanation_corpus(train: str | Path) -> Corpus:
    """The non-empty ``exp`` explanations of a MedMCQA split file (JSONL or a JSON list).

    Raises:
        InputError: a duplicate id, an explanation that is not a string, or no explanation at all.
    """
    passages: list[Passage] = []
    seen: set[str] = set()
    for where, rec in iter_records(train):
        raw = rec.get("exp")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        text = check_text(raw, where, "exp")
        qid = get_id(rec, ("id",), where, default=str(where.line if where.line is not None else where.record))
        if qid in seen:
            raise where.error(f"duplicate id {qid!r}", "id")
        seen.add(qid)
        title = " / ".join(str(rec[k]) for k in ("subject_name", "topic_name") if isinstance(rec.get(k), str))
        passages.append(Passage(f"exp-{qid}", title, text.strip()))
    if not passages:
        raise InputError("no record with an explanation ('exp')", path=train)
    return Corpus(passages, source=str(train))


__all__ = ["explanation_corpus", "textbook_corpus"]
