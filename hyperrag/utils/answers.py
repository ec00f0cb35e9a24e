"""Reading answers: SQuAD-style normalisation, whole-word containment of normalised texts, and multiple-choice
options (shown by letter, read back from a letter or an option's text). Shared by the QA reader's task, the answer
metrics, the oracle and the gold-hop builder."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

OPTION_LETTERS = string.ascii_uppercase
_BARE_LETTER = re.compile(r"\(?([A-Za-z])\)?[.:)]?")  # "B", "b", "(B)", "B.", "B)"
_OPENING_LETTER = re.compile(r"\(([A-Z])\)|([A-Z])[.:)]")  # "(B) Paris", "B) Paris", "B. Paris"
_ARTICLES = re.compile(r"\b(a|an|the)\b", flags=re.UNICODE)
_PUNCT = set(string.punctuation)
_PUNCT_RUN = re.compile(f"[{re.escape(string.punctuation)}]+")


def normalize_answer(text: str) -> str:
    """Lower case, drop punctuation and articles, collapse whitespace (the SQuAD v1.1 evaluation script)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def mentions(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` as whole words, both already normalised (words joined by single
    spaces: :func:`normalize_answer` or a caller's own normalisation); an empty needle never does."""
    return bool(needle) and f" {needle} " in f" {haystack} "


def option_letter(i: int) -> str:
    """The letter an option is shown with: 0 → ``A``."""
    return OPTION_LETTERS[i]


def parse_option(answer: str, options: Sequence[str]) -> int | None:
    """The option an answer names, or ``None``.

    In order: the answer is a bare letter (``B``, ``b``, ``(B)``, ``B.``); it equals an option's text
    (normalised, punctuation read as a space so that ``NOT_SUPPORTED`` reads "not supported"); it opens with a
    letter (``B) Paris``, ``(B) Paris``); the options whose texts the answer contains, or that contain the
    answer, are one option, or one of them contains all the others ("not supported" over "supported").
    """

    def norm_of(text: str) -> str:
        return normalize_answer(_PUNCT_RUN.sub(" ", text))

    def lettered(match: re.Match[str] | None) -> int | None:
        if match is None:
            return None
        i = OPTION_LETTERS.index(next(g for g in match.groups() if g).upper())
        return i if i < len(options) else None

    stripped = answer.strip()
    found = lettered(_BARE_LETTER.fullmatch(stripped))
    if found is not None:
        return found
    norm = norm_of(answer)
    texts = [norm_of(o) for o in options]
    if norm and norm in texts:
        return texts.index(norm)
    found = lettered(_OPENING_LETTER.match(stripped))
    if found is not None:
        return found
    if not norm:
        return None
    padded = f" {norm} "
    hits = sorted((i for i, t in enumerate(texts) if t and (f" {t} " in padded or padded in f" {t} ")),
                  key=lambda i: -len(texts[i]))
    if hits and all(f" {texts[i]} " in f" {texts[hits[0]]} " for i in hits[1:]):
        return hits[0]
    return None
