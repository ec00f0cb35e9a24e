"""Dual-level query keywords without an LLM: LightRAG's low-level (entities, details) and high-level (themes)
keywords, read from YAKE's keywords of the question.

LightRAG asks the LLM for two keyword lists per query. Without an LLM, YAKE (the keyword-extraction library)
scores the question's candidate n-grams, and each keyword goes to one level by what it names: a keyword with
a capitalised word (other than the question's first word) or a number names something specific — a low-level
keyword; the others (common-noun phrases such as "river", "spouse", "population") are themes — high-level
keywords. This is the documented LLM-free stand-in, not LightRAG's extraction.
"""

from __future__ import annotations

import re

from hyperrag.passage_graph.keywords import KeywordSettings

_WORD = re.compile(r"[^\W_][\w-]*", re.UNICODE)


def _specific_words(question: str) -> set[str]:
    """Words of the question that name something: capitalised (not as its first word) or holding a digit."""
    words = _WORD.findall(question)
    out = set()
    for i, w in enumerate(words):
        inner_capital = any(c.isupper() for c in w[1:])
        if any(c.isdigit() for c in w) or inner_capital or (w[:1].isupper() and i > 0):
            out.add(w)
    return out


def dual_level_keywords(question: str, settings: KeywordSettings) -> tuple[list[str], list[str]]:
    """``(low_level, high_level)`` keywords of ``question``, each list in YAKE's order (best first).

    Args:
        settings: YAKE's language, longest n-gram, number of keywords (``top``) and dedup threshold.
    """
    import yake

    extractor = yake.KeywordExtractor(lan=settings.language, n=settings.max_ngram, top=settings.top,
                                      dedupLim=settings.dedup_threshold)
    specific = _specific_words(question)
    low: list[str] = []
    high: list[str] = []
    for keyword, _score in extractor.extract_keywords(question) if question.strip() else []:
        words = _WORD.findall(keyword)
        (low if any(w in specific for w in words) else high).append(keyword)
    return low, high
