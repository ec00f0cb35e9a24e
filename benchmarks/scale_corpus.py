"""Corpora for the scale benchmarks (``bench_hugrag_scale.py``, ``bench_scale.py``): 2Wiki slices, the LLM-free
stand-in OpenIE they are indexed with, and synthetic passages beyond the 6,119 real ones.

* :func:`slice_passages` / :func:`load_rows` — the first passages of ``2wikimultihopqa_corpus/corpus.json``.
* :func:`stand_in_openie` — the corpus ships no OpenIE file and no LLM is assumed, so the entity graph is an
  LLM-free *stand-in*: each passage's title and its YAKE keywords are entities, linked title → keyword
  ("mentions"). A HippoRAG-format file, read by the real :func:`hyperrag.data.openie.read_openie`.
* :class:`SyntheticCorpus` — passage ``j`` beyond the real ones copies a random real passage (its *source*) with
  every name word (a capitalised word that is rarely written lower-case in the corpus) consistently replaced by a
  random name word of the corpus vocabulary, so the synthetic corpus keeps real sentence structure and connectives
  while its entity names keep growing with the corpus. What per-passage extraction gave the source (its YAKE keyword
  set, its CDF-RAG causal records) is carried over *renamed the same way* (:meth:`SyntheticCorpus.keywords`,
  :meth:`SyntheticCorpus.records`) instead of being extracted again: those per-passage stages are timed on the real
  passages only. Passage ``j`` is the same in every corpus size (its random draws are seeded by ``j``).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hyperrag.data import Passage

_WORD = re.compile(r"\b[A-Za-z][a-z]+\b")
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")


def default_corpus_path(shared_data: str) -> str:
    """``<shared data>/2wikimultihopqa_corpus/corpus.json``."""
    return str(Path(shared_data) / "2wikimultihopqa_corpus" / "corpus.json")


def load_rows(path: str | Path) -> list[dict[str, str]]:
    """The corpus file's rows (``title``, ``text``)."""
    return json.loads(Path(path).read_text())


def slice_passages(rows: list[dict], chars: int) -> list[dict]:
    """The first rows whose titles and texts add up to ``chars`` characters (the row crossing it included)."""
    out, used = [], 0
    for row in rows:
        if used >= chars:
            break
        out.append(row)
        used += len(row["title"]) + len(row["text"])
    return out


def real_passages(rows: Sequence[dict], n: int) -> list[Passage]:
    """The first ``n`` rows as passages ``2wiki-<i>``."""
    return [Passage(f"2wiki-{i}", r["title"], r["text"]) for i, r in enumerate(rows[:n])]


def stand_in_openie(passages: Sequence[Passage], keywords: Sequence[frozenset[str]], path: Path) -> Path:
    """A HippoRAG-format OpenIE file: per passage its title and keywords as entities, title → keyword triples."""
    docs = []
    for i, (p, kws) in enumerate(zip(passages, keywords)):
        title = p.title.strip()
        ents = [title, *sorted(k for k in kws if k.casefold() != title.casefold())]
        docs.append({"idx": i, "passage": p.content, "extracted_entities": ents,
                     "extracted_triples": [[title, "mentions", k] for k in ents[1:]]})
    path.write_text(json.dumps({"docs": docs, "model": "yake stand-in (LLM-free)"}))
    return path


def name_vocabulary(rows: Sequence[dict], max_lower_share: float = 0.1) -> list[str]:
    """Name words of the corpus: capitalised words of 3+ letters written lower-case at most ``max_lower_share``
    as often as capitalised ("Lothair", "Boso"; not "The", "She", "Abbey" is kept only if rarely "abbey")."""
    capital: Counter[str] = Counter()
    lower: Counter[str] = Counter()
    for r in rows:
        for w in _WORD.findall(f"{r['title']} {r['text']}"):
            (capital if w[0].isupper() else lower)[w.casefold()] += 1
    names = [w for w, c in capital.items() if len(w) >= 3 and lower[w] <= max_lower_share * c]
    return sorted(w.capitalize() for w in names)


class SyntheticCorpus:
    """Synthetic passages ``real_count, real_count + 1, ...`` from the real rows (see the module docstring).

    Args:
        rows: the real corpus rows (``title``, ``text``).
        seed: seeds every passage's draws (passage ``j`` uses ``seed`` and ``j``).
    """

    def __init__(self, rows: Sequence[dict], seed: int = 0) -> None:
        self.rows = list(rows)
        self.seed = seed
        self.vocabulary = name_vocabulary(self.rows)
        self._names = {w.casefold() for w in self.vocabulary}

    @property
    def real_count(self) -> int:
        return len(self.rows)

    def _draw(self, j: int) -> tuple[int, dict[str, str]]:
        """Passage ``j``'s source row and its renaming (casefolded name word → new name word)."""
        rng = random.Random(self.seed * 1_000_003 + j)
        source = rng.randrange(len(self.rows))
        row = self.rows[source]
        words = sorted({w.casefold() for w in _NAME.findall(f"{row['title']} {row['text']}")} & self._names)
        return source, {w: rng.choice(self.vocabulary) for w in words}

    @staticmethod
    def _rename(text: str, mapping: dict[str, str]) -> str:
        if not mapping:
            return text
        return _NAME.sub(lambda m: mapping.get(m.group(0).casefold(), m.group(0)), text)

    def passage(self, j: int) -> tuple[Passage, int, dict[str, str]]:
        """Synthetic passage ``j`` (``j >= real_count``), its source row and its renaming."""
        if j < self.real_count:
            raise ValueError(f"passage {j} is a real one (the corpus has {self.real_count})")
        source, mapping = self._draw(j)
        row = self.rows[source]
        return Passage(f"syn-{j}", self._rename(row["title"], mapping), self._rename(row["text"], mapping)), source, mapping

    def passages(self, n: int) -> tuple[list[Passage], list[int], list[dict[str, str]]]:
        """The synthetic passages ``real_count .. n - 1`` (none when ``n <= real_count``), their sources and
        renamings."""
        out = [self.passage(j) for j in range(self.real_count, n)]
        return [p for p, _, _ in out], [s for _, s, _ in out], [m for _, _, m in out]

    @staticmethod
    def keywords(source_keywords: frozenset[str], mapping: dict[str, str]) -> frozenset[str]:
        """The source's (casefolded) keyword set with its name words renamed."""
        return frozenset(" ".join(mapping[t].casefold() if t in mapping else t for t in k.split())
                         for k in source_keywords)

    @classmethod
    def records(cls, source_record: Any, passage: Passage, mapping: dict[str, str]) -> Any:
        """The source's :class:`~hyperrag.causal.records.PassageRecord`, renamed, as passage ``passage``'s."""
        pairs = [{**pair, **{k: cls._rename(pair[k], mapping) for k in ("cause", "effect", "sentence", "statement")
                             if isinstance(pair.get(k), str)}} for pair in source_record.pairs]
        return replace(source_record, id=passage.id, fingerprint=f"synthetic:{passage.id}", pairs=pairs)
