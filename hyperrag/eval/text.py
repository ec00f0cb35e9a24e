"""Text helpers shared by the evaluation metrics and the HolisQA builder: sentence splitting, content tokens,
abstention detection. Deterministic and dependency-free (no NLTK / spaCy models to download)."""

from __future__ import annotations

import re

from hyperrag.eval.qa import normalize_answer

# A sentence ends at . ! ? (optionally followed by a closing quote/bracket) before whitespace and an
# upper-case letter, digit or opening quote/bracket — but not after common abbreviations or initials.
_ABBREV = {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "inc", "ltd", "co", "corp",
           "no", "vol", "fig", "gen", "col", "lt", "sgt", "capt", "rev", "u.s", "e.g", "i.e", "jan", "feb",
           "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "ca", "approx"}
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]?\s+(?=[\"'“‘(\[]?[A-Z0-9])")

# Function words that carry no claim content (lexical groundedness ignores them).
_STOPWORDS = """
a an the and or but if then so of to in on at by for with from as into onto about over under after before
between through during without within is are was were be been being am do does did done has have had having
it its this that these those there here he she they them his her their we us our you your i me my mine
who whom whose which what when where why how not no nor only also very can could would should will shall
may might must than too such same other another each every any all some both either neither one s
"""
STOPWORDS = frozenset(_STOPWORDS.split())

ABSTENTIONS = frozenset(normalize_answer(a) for a in (
    "", "unknown", "i don't know", "i do not know", "no answer", "none", "n/a", "not enough information",
    "insufficient information", "cannot be determined", "cannot answer", "the passages do not say",
    "not mentioned", "not stated", "unanswerable"))


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (rule-based; keeps abbreviations such as "Dr." and initials together)."""
    text = " ".join(text.split())
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        piece = text[start:m.start()].strip()
        last = piece.rsplit(" ", 1)[-1].rstrip(".!?\"'”’)]").lower()
        if last in _ABBREV or (len(last) == 1 and last.isalpha()):
            continue  # "Dr. Smith", "J. R. R. Tolkien"
        out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def content_tokens(text: str) -> list[str]:
    """SQuAD-normalised tokens minus stopwords (the words a claim's support is judged on)."""
    return [t for t in normalize_answer(text).split() if t not in STOPWORDS]


def is_abstention(answer: str | None) -> bool:
    """True for empty answers and explicit "I don't know"-style non-answers (not counted as answered)."""
    return answer is None or normalize_answer(answer) in ABSTENTIONS


def contains_text(haystack_normalized: str, needle: str) -> bool:
    """Whether ``needle`` (normalised) occurs in an already normalised text, on token boundaries."""
    n = normalize_answer(needle)
    return bool(n) and f" {n} " in f" {haystack_normalized} "
