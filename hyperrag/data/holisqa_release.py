"""HolisQA as its authors released it (HugRAG Table 3): one domain folder read into a corpus and its questions.

A domain folder (``biology/``, ``business/``, ``computer_science/``, ``medicine/``, ``psychology/``) holds
``all_abstracts.txt`` (the domain's abstracts, one per blank-line-separated paragraph, in ``articles.jsonl``'s
order: the file the paper indexes), ``sentences.jsonl`` (``sentence_id``, ``article_id``, ``sent_idx``, ``text``),
``articles.jsonl`` (``article_id``, ``title``, ...) and ``qa.jsonl`` (``qa_id``, ``question``, ``answer``,
``context_sentence_ids``).

* The corpus: each abstract of ``all_abstracts.txt`` cut into passages by the project's chunker (``chunking/``:
  semchunk, 200 MiniLM tokens, 20 overlapping; the paper does not say how it chunks) — passage ids
  ``<article_id>#<k>`` (the article id alone when one chunk holds it), no title (the indexed file has none). No
  chunk crosses an abstract: the paragraphs are chunked one by one.
* Each question's gold: its gold sentences (:class:`~hyperrag.data.types.GoldSentence`: text, the passages holding
  it whole — chunks overlap, so up to two — or, for a sentence that a chunk boundary cuts, the chunk holding most of
  its characters; then their copies, passages of the same text under another article id, as the release repeats some
  abstracts), ``gold_ids`` = each sentence's first holding passage (its own article's), ``answers`` = the free-text
  answer.
  Context recall (:func:`hyperrag.eval.context.context_recall`) then counts covered gold sentences without an LLM.
* The chunking is cached under ``cache_dir`` (keyed by the file's digest and the chunk settings): every run of a
  table reads the same passages without re-tokenising 1.7 M characters.

    ds = read_holisqa_release("../shared/data/holisqa", "medicine", ChunkSettings("all-MiniLM-L6-v2", 200, 20), None)

A question naming a sentence id that ``sentences.jsonl`` lacks stops with one line naming the file, the line, the
question and the id (exit 2).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from hyperrag.data.types import Corpus, Dataset, GoldSentence, Passage, Query
from hyperrag.errors import InputError

if TYPE_CHECKING:  # the settings object is handed in (Hydra builds it): no runtime import of the index package
    from hyperrag.index.chunking import ChunkSettings

log = logging.getLogger(__name__)

#: the files a release domain folder must hold
RELEASE_FILES = ("all_abstracts.txt", "sentences.jsonl", "articles.jsonl", "qa.jsonl")
#: the five domains of HugRAG Table 3
DOMAINS = ("medicine", "computer_science", "business", "biology", "psychology")


def read_holisqa_release(dir: str | Path, domain: str, chunking: ChunkSettings, cache_dir: str | Path | None,
                         name: str | None = None) -> Dataset:
    """Read one HolisQA release domain.

    Args:
        dir: the folder holding the five domain folders.
        domain: one of :data:`DOMAINS` (any folder name under ``dir`` in the release layout is read).
        chunking: how each abstract is cut into passages (``hydra_configs/chunking/``).
        cache_dir: where the chunking is cached (``None``: not cached).
        name: the dataset's name (default ``holisqa_<domain>``, as the published-number file names it).

    Raises:
        InputError: a missing file, abstracts and articles out of step, a sentence not in its abstract, a
            question without a question / answer, or a gold sentence id not in ``sentences.jsonl``.
    """
    folder = Path(dir) / domain
    for f in RELEASE_FILES:
        if not (folder / f).is_file():
            raise InputError(f"HolisQA release file missing (data.dir holds the domain folders: {', '.join(DOMAINS)})",
                             path=folder / f, setting="data.dir / data.domain")
    articles = _article_ids(folder / "articles.jsonl")
    abstracts = _abstracts(folder / "all_abstracts.txt", len(articles))
    sentences = _sentences(folder / "sentences.jsonl", set(articles))
    passages, spans = _chunks(folder / "all_abstracts.txt", articles, abstracts, chunking, cache_dir)
    holders = _sentence_holders(sentences, dict(zip(articles, abstracts)), spans, folder / "sentences.jsonl",
                                _copies(passages))
    queries = _queries(folder / "qa.jsonl", sentences, holders)
    log.info("HolisQA %s: %d abstracts → %d passages, %d questions", domain, len(articles), len(passages),
             len(queries))
    return Dataset(name or f"holisqa_{domain}", Corpus(passages, source=str(folder / "all_abstracts.txt")), queries)


def _article_ids(path: Path) -> list[str]:
    from hyperrag.data.jsonl import iter_jsonl, require_str

    ids = [require_str(obj, "article_id", path=path, line=line) for line, obj in iter_jsonl(path)]
    if len(set(ids)) != len(ids):
        raise InputError("repeated article_id", path=path, field="article_id")
    return ids


def _abstracts(path: Path, n_articles: int) -> list[str]:
    """The blank-line-separated paragraphs of ``all_abstracts.txt``, one per article."""
    paragraphs = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n")]
    paragraphs = [p for p in paragraphs if p]
    if len(paragraphs) != n_articles:
        raise InputError(f"{len(paragraphs)} blank-line-separated abstracts for {n_articles} articles in "
                         "articles.jsonl (the release keeps them in step)", path=path)
    return paragraphs


def _sentences(path: Path, articles: set[str]) -> dict[str, tuple[int, str, str]]:
    """``sentence_id → (file line, article_id, text)``."""
    from hyperrag.data.jsonl import iter_jsonl, require_str

    out: dict[str, tuple[int, str, str]] = {}
    for line, obj in iter_jsonl(path):
        sid = require_str(obj, "sentence_id", path=path, line=line)
        art = require_str(obj, "article_id", path=path, line=line)
        if art not in articles:
            raise InputError(f"sentence {sid}: article {art} is not in articles.jsonl", path=path, line=line,
                             field="article_id")
        out[sid] = (line, art, require_str(obj, "text", path=path, line=line))
    return out


def _chunks(path: Path, articles: list[str], abstracts: list[str], chunking: ChunkSettings,
            cache_dir: str | Path | None) -> tuple[list[Passage], dict[str, list[tuple[str, int, int]]]]:
    """The passages and, per article, its chunks ``(passage id, start, end)`` within its abstract (cached)."""
    from dataclasses import asdict
    from importlib.metadata import version

    from hyperrag.utils.hashing import file_digest, text_digest

    key = text_digest(json.dumps([file_digest(path), asdict(chunking), version("semchunk")], sort_keys=True), 24)
    cache = Path(cache_dir) / "holisqa_release" / f"chunks-{key}.json" if cache_dir is not None else None
    if cache is not None and cache.is_file():
        raw = json.loads(cache.read_text(encoding="utf-8"))
    else:
        raw = [chunking.spans(text) for text in abstracts]
        if cache is not None:
            from hyperrag.utils.atomic import atomic_write_json

            atomic_write_json(cache, raw, indent=None)
    passages: list[Passage] = []
    spans: dict[str, list[tuple[str, int, int]]] = {}
    for art, text, cuts in zip(articles, abstracts, raw):
        ids = [art] if len(cuts) == 1 else [f"{art}#{k}" for k in range(len(cuts))]
        spans[art] = [(pid, int(a), int(b)) for pid, (a, b) in zip(ids, cuts)]
        passages.extend(Passage(pid, "", text[a:b]) for pid, (a, b) in zip(ids, cuts))
    return passages, spans


def _copies(passages: list[Passage]) -> dict[str, tuple[str, ...]]:
    """``passage id → the other passages with the same text`` (in corpus order), for passages that have copies: the
    release repeats some abstracts under two article ids (medicine: 69 abstracts, 34 of the 227 questions' gold
    sentences lie in one), and a repeated abstract is chunked the same way."""
    by_text: dict[str, list[str]] = {}
    for p in passages:
        by_text.setdefault(p.text, []).append(p.id)
    return {pid: tuple(o for o in ids if o != pid) for ids in by_text.values() if len(ids) > 1 for pid in ids}


def _sentence_holders(sentences: dict[str, tuple[int, str, str]], abstracts: dict[str, str],
                      spans: dict[str, list[tuple[str, int, int]]], path: Path,
                      copies: dict[str, tuple[str, ...]] | None = None) -> dict[str, tuple[str, ...]]:
    """``sentence_id → the passages holding it whole`` (in passage order), or the one holding most of it when a
    chunk boundary cuts it; then each one's copies (``copies``: the same passage text under another article id —
    retrieving the copy retrieves the sentence; the sentence's own passages stay first, ``gold_ids`` reads them)."""
    copies = copies or {}
    holders: dict[str, tuple[str, ...]] = {}
    cursor: dict[str, int] = {}
    for sid, (line, art, text) in sentences.items():
        abstract = abstracts[art]
        start = abstract.find(text, cursor.get(art, 0))
        if start < 0:
            start = abstract.find(text)
        if start < 0:
            raise InputError(f"sentence {sid} is not in its article {art}'s abstract in all_abstracts.txt", path=path,
                             line=line, field="text")
        end = start + len(text)
        cursor[art] = end
        whole = tuple(pid for pid, a, b in spans[art] if a <= start and end <= b)
        if not whole:
            whole = (max(spans[art], key=lambda s: min(end, s[2]) - max(start, s[1]))[0],)
        holders[sid] = tuple(dict.fromkeys([*whole, *(c for pid in whole for c in copies.get(pid, ()))]))
    return holders


def _queries(path: Path, sentences: dict[str, tuple[int, str, str]],
             holders: dict[str, tuple[str, ...]]) -> list[Query]:
    from hyperrag.data.jsonl import iter_jsonl, require_str, require_str_list

    queries: list[Query] = []
    for line, obj in iter_jsonl(path):
        qid = require_str(obj, "qa_id", path=path, line=line)
        ids = require_str_list(obj, "context_sentence_ids", path=path, line=line)
        for sid in ids:
            if sid not in sentences:
                raise InputError(f"question {qid}: gold sentence id {sid} is not in sentences.jsonl", path=path,
                                 line=line, field="context_sentence_ids")
        gold = tuple(GoldSentence(sid, sentences[sid][2], holders[sid][0], holders[sid]) for sid in ids)
        queries.append(Query(qid, require_str(obj, "question", path=path, line=line),
                             answers=(require_str(obj, "answer", path=path, line=line),),
                             gold_ids=tuple(dict.fromkeys(g.passage_id for g in gold)), gold_sentences=gold))
    if not queries:
        raise InputError("no questions", path=path)
    return queries
