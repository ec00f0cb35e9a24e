"""Text helpers shared by the evaluation metrics and the HolisQA builder: content tokens and abstention detection
(sentences: :mod:`hyperrag.utils.sentences`). Deterministic, nothing to download."""

from __future__ import annotations

from hyperrag.eval.qa import normalize_answer
from hyperrag.utils.stopwords import english_stopwords

ABSTENTIONS = frozenset(normalize_answer(a) for a in (
    "", "unknown", "i don't know", "i do not know", "no answer", "none", "n/a", "not enough information",
    "insufficient information", "cannot be determined", "cannot answer", "the passages do not say",
    "not mentioned", "not stated", "unanswerable"))


def content_tokens(text: str) -> list[str]:
    """SQuAD-normalised tokens minus stopwords (the words a claim's support is judged on)."""
    stop = english_stopwords()
    return [t for t in normalize_answer(text).split() if t not in stop]


def is_abstention(answer: str | None) -> bool:
    """True for empty answers and explicit "I don't know"-style non-answers (not counted as answered)."""
    return answer is None or normalize_answer(answer) in ABSTENTIONS


def contains_text(haystack_normalized: str, needle: str) -> bool:
    """Whether ``needle`` (normalised) occurs in an already normalised text, on token boundaries."""
    n = normalize_answer(needle)
    return bool(n) and f" {n} " in f" {haystack_normalized} "
