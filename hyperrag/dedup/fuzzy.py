"""Stage 1 of entity deduplication: fuzzy string matching of entity names with rapidfuzz.

All pairs are compared in row blocks with ``rapidfuzz.process.cdist`` (C++, multi-threaded), so E = 20 k
names take seconds. Guards against the classic false merges of string similarity:

* names are compared after folding plurals (``"writers"`` → ``"writer"``), so the score measures spelling
  variation rather than number;
* names must carry the same digits (``"1 january 2010"`` vs ``"1 january 2011"`` scores 93 but is no duplicate);
* words on which names differ must not be *discriminators* — compass directions, months, roman numerals,
  ordinals (``"east coast highway"`` vs ``"west coast highway"``, ``"xxiii olympic winter games"``);
* both names need ``min_chars`` characters (short names and initials collide by chance);
* with ``token_guard``, multi-word names must carry the same content words (plurals folded, stop words
  dropped, order free): ``"south korea"`` vs ``"south korean"``, ``"indirect civil disobedience"`` vs
  ``"direct civil disobedience"``, ``"republic of the congo"`` vs ``"democratic republic of the congo"`` are
  distinct entities one word apart, while ``"olympic winter games"`` / ``"the winter olympic games"`` and
  acronyms (``"us congress"`` / ``"united states congress"``) still merge; the fuzzy stage still lets one word differ by spelling (``"barack obama"`` / ``"barrack obama"``: same
  first letter, 5+ letters, neither word a prefix of the other);
* entities with known, different types never merge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import permutations

import numpy as np

from hyperrag.utils.stopwords import NAME_PARTICLES

_DIGITS = re.compile(r"\d+")
DISCRIMINATORS = frozenset([
    "north", "south", "east", "west", "northern", "southern", "eastern", "western", "northeast", "northwest",
    "southeast", "southwest", "upper", "lower", "central", "new", "old", "great", "little", "greater",
    "lesser", "senior", "junior", "jr", "sr", "january", "february", "march", "april", "may", "june", "july",
    "august", "september", "october", "november", "december", "first", "second", "third", "fourth", "fifth",
    "sixth", "seventh", "eighth", "ninth", "tenth", "men", "women", "men", "s", "women", "s", "boys", "girls",
    "male", "female",
])
_ROMAN = re.compile(r"^(?=[ivxlcdm]+$)m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
SCORERS = ("ratio", "token_sort_ratio", "token_set_ratio", "WRatio")


def digit_signature(name: str) -> str:
    return " ".join(_DIGITS.findall(name))


def fold_plural(name: str) -> str:
    """``"flavored vodkas"`` → ``"flavored vodka"``: a trailing ``s`` dropped from words of 4+ letters."""
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") and not any(c.isdigit() for c in w)
        else w for w in name.split())


def _discriminating(word: str) -> bool:
    return word in DISCRIMINATORS or bool(_ROMAN.match(word))


def content_words(name: str) -> frozenset[str]:
    """Plural-folded words of ``name`` without its name particles (articles, prepositions, ``and``, ``s``)."""
    return frozenset(w for w in fold_plural(name).split() if w not in NAME_PARTICLES)


def _typo(only_a: frozenset[str], only_b: frozenset[str]) -> bool:
    """One word spelt two ways (``barack`` / ``barrack``): one word each side, 5+ letters, same first letter,
    neither a prefix of the other (``korea`` / ``korean`` is a derivation, not a typo)."""
    if len(only_a) != 1 or len(only_b) != 1:
        return False
    (wa,), (wb,) = only_a, only_b
    return (min(len(wa), len(wb)) >= 5 and wa[0] == wb[0] and not wa.startswith(wb)
            and not wb.startswith(wa))


def _acronym(only_a: frozenset[str], only_b: frozenset[str]) -> bool:
    """One side's single extra word spells the initials of the other side's extra words (``us`` / ``united states``)."""
    for one, many in ((only_a, only_b), (only_b, only_a)):
        if len(one) == 1 and 2 <= len(many) <= 4:
            (word,) = one
            if any("".join(w[0] for w in perm) == word for perm in permutations(many)):
                return True
    return False


def compatible(a: int, b: int, names: Sequence[str], types: Sequence[str] | None, token_guard: bool = False,
               allow_typo: bool = False) -> bool:
    """Digit, discriminator, type (and optionally content-word) guards shared by both stages.

    ``token_guard``: multi-word names need the same content words; ``allow_typo`` (the fuzzy stage) lets one word
    differ by spelling (:func:`_typo`)."""
    if digit_signature(names[a]) != digit_signature(names[b]):
        return False
    wa, wb = set(fold_plural(names[a]).split()), set(fold_plural(names[b]).split())
    if any(_discriminating(w) for w in wa ^ wb):
        return False
    if token_guard:
        ca, cb = content_words(names[a]), content_words(names[b])
        if (ca != cb and max(len(ca), len(cb)) >= 2 and not _acronym(ca - cb, cb - ca)
                and not (allow_typo and _typo(ca - cb, cb - ca))):
            return False
    return not (types is not None and types[a] and types[b] and types[a] != types[b])


def fuzzy_pairs(names: Sequence[str], threshold: float = 95.0, scorer: str = "ratio", min_chars: int = 4,
                types: Sequence[str] | None = None, block_rows: int = 2048, workers: int = -1,
                token_guard: bool = False) -> list[tuple[int, int, float]]:
    """Pairs ``(i, j, score)`` with ``i < j`` whose names score at least ``threshold`` (0–100).

    Args:
        names: entity names (already canonical: lower case, punctuation folded); scored with plurals folded.
        threshold: rapidfuzz score cut-off.
        scorer: one of :data:`SCORERS` (``rapidfuzz.fuzz`` functions).
        min_chars: names shorter than this never match.
        types: optional entity types (``""`` = unknown) — different known types never match.
        block_rows: rows per ``cdist`` call (memory: ``block_rows × E`` bytes).
        workers: rapidfuzz threads (-1 = all cores).
        token_guard: multi-word names must have the same content words (see the module docstring).
    """
    from rapidfuzz import fuzz, process

    if scorer not in SCORERS:
        raise ValueError(f"scorer must be one of {SCORERS}, got {scorer!r}")
    score_fn = getattr(fuzz, scorer)
    eligible = np.array([len(n) >= min_chars for n in names], dtype=bool)
    ids = np.nonzero(eligible)[0]
    cand = [fold_plural(names[i]) for i in ids]
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, len(cand), block_rows):
        block = cand[start: start + block_rows]
        scores = process.cdist(block, cand, scorer=score_fn, score_cutoff=threshold, dtype=np.uint8,
                               workers=workers)
        rows, cols = np.nonzero(scores)
        for r, c in zip(rows.tolist(), cols.tolist()):
            i, j = int(ids[start + r]), int(ids[c])
            if i < j and compatible(i, j, names, types, token_guard, allow_typo=True):
                pairs.append((i, j, float(scores[r, c])))
    return pairs
