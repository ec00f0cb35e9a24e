"""OpenIE records (HippoRAG format) for a corpus: entities and triples per passage.

Two layouts are read:

* HippoRAG v1 (released with HippoRAG, written by :mod:`hyperrag.llm.openie`)::

      {"docs": [{"idx": 0, "passage": "Title\\nText", "extracted_entities": [...],
                 "extracted_triples": [[subject, relation, object], ...]}, ...]}

  ``docs[i]`` belongs to ``corpus[i]`` (or to the passage at position ``idx`` when present).
* HippoRAG 2 (``openie_results_ner_<model>.json``, written by its ``HippoRAG.index``): ``idx`` is
  ``"chunk-" + md5(title + "\\n" + text)`` of the passage it belongs to, in any order, plus the file-level
  ``avg_ent_chars`` / ``avg_ent_words``. Records are matched to the corpus by that id; every corpus passage needs
  one (a record of another corpus is an error naming it).

Malformed triples (not three non-empty strings) are skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hyperrag.data.jsonl import encodable
from hyperrag.data.musique import load_json
from hyperrag.data.types import Corpus
from hyperrag.errors import InputError
from hyperrag.utils.collector import paused_collector

Triple = tuple[str, str, str]


@dataclass
class OpenIERecords:
    entities: list[list[str]]  # per passage, in corpus order
    triples: list[list[Triple]]  # per passage, in corpus order
    skipped_triples: int
    source: str


def _norm(text: str) -> str:
    return " ".join(text.split())


CHUNK_PREFIX = "chunk-"


def chunk_id(title: str, text: str) -> str:
    """HippoRAG 2's id of a passage: ``chunk-`` + the md5 of ``title + "\\n" + text`` (its ``compute_mdhash_id``
    over the ``f"{title}\\n{text}"`` string it indexes)."""
    import hashlib

    return CHUNK_PREFIX + hashlib.md5(f"{title}\n{text}".encode()).hexdigest()


def _chunk_positions(docs: list, corpus: Corpus, path: Path) -> list[int]:
    """The corpus position of each record of a HippoRAG 2 file (ids ``chunk-<md5>``)."""
    by_id: dict[str, int] = {}
    for pos, p in enumerate(corpus.passages):
        by_id.setdefault(chunk_id(p.title, p.text), pos)
    positions = []
    for i, doc in enumerate(docs):
        cid = doc.get("idx") if isinstance(doc, dict) else None
        if not isinstance(cid, str) or cid not in by_id:
            raise InputError(f"id {cid!r} is not the chunk id of any passage of the corpus {corpus.source} "
                             "(an OpenIE file of another corpus?)", path=path, record=i, field="idx")
        positions.append(by_id[cid])
    return positions


@paused_collector()  # millions of acyclic containers at 10^5 passages: see hyperrag/utils/collector.py
def read_openie(path: str | Path, corpus: Corpus) -> OpenIERecords:
    path = Path(path)
    data = load_json(path)
    docs = data.get("docs") if isinstance(data, dict) else data
    if not isinstance(docs, list):
        raise InputError("expected an object with a 'docs' list", path=path, field="docs")
    chunked = bool(docs) and isinstance(docs[0], dict) and str(docs[0].get("idx", "")).startswith(CHUNK_PREFIX)
    positions = _chunk_positions(docs, corpus, path) if chunked else None
    if len(docs) != len(corpus) and not chunked:
        raise InputError(f"has {len(docs)} records but the corpus {corpus.source} has {len(corpus)} passages",
                         path=path, field="docs")
    entities: list[list[str]] = [[] for _ in range(len(corpus))]
    triples: list[list[Triple]] = [[] for _ in range(len(corpus))]
    filled = [False] * len(corpus)
    skipped = 0
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise InputError("expected a JSON object", path=path, record=i)
        pos = positions[i] if positions is not None else doc.get("idx", i)
        if not isinstance(pos, int) or not 0 <= pos < len(corpus) or filled[pos]:
            raise InputError(f"bad or repeated passage position {pos!r}", path=path, record=i, field="idx")
        filled[pos] = True
        passage = doc.get("passage")
        if isinstance(passage, str) and _norm(corpus[pos].text) not in _norm(passage):
            raise InputError(f"text does not match corpus passage {corpus[pos].id!r} ({corpus[pos].title!r})",
                             path=path, record=i, field="passage")
        ents = doc.get("extracted_entities", [])
        if not isinstance(ents, list):
            raise InputError("expected a list", path=path, record=i, field="extracted_entities")
        entities[pos] = [e for e in ents if isinstance(e, str) and e.strip() and encodable(e)]
        raw_triples = doc.get("extracted_triples", [])
        if not isinstance(raw_triples, list):
            raise InputError("expected a list", path=path, record=i, field="extracted_triples")
        for t in raw_triples:
            if isinstance(t, (list, tuple)) and len(t) == 3 and all(isinstance(x, str) and x.strip() and encodable(x)
                                                                   for x in t):
                triples[pos].append((t[0], t[1], t[2]))
            else:
                skipped += 1
    if chunked and not all(filled):
        missing = filled.index(False)
        raise InputError(f"has no record for {filled.count(False)} of the corpus's {len(corpus)} passages, e.g. "
                         f"{corpus[missing].id!r} ({corpus[missing].title!r}, {chunk_id(corpus[missing].title, corpus[missing].text)})",
                         path=path, field="docs")
    return OpenIERecords(entities, triples, skipped, str(path))
