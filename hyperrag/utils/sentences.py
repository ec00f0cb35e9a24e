"""Sentence splitting: pysbd's rule-based English segmenter (abbreviations, initials, decimals, quotes), one
place.

pysbd is pure Python and needs no model or download. Users: the causal candidate miner (sentences with their
offsets into the passage), the HolisQA builder and the groundedness metric (sentences of an answer).
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _segmenter() -> Any:
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def sentence_spans(text: str) -> list[tuple[int, str]]:
    """``(start offset in text, sentence)`` for each sentence of ``text``, surrounding white space
    stripped."""
    out: list[tuple[int, str]] = []
    for span in _segmenter().segment(text) if text.strip() else []:
        sentence = span.sent.strip()
        if sentence:
            out.append((span.start + len(span.sent) - len(span.sent.lstrip()), sentence))
    return out


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` with runs of white space folded to one space."""
    return [s for _, s in sentence_spans(" ".join(text.split()))]


__all__ = ["sentence_spans", "split_sentences"]
