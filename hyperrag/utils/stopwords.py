"""English stop words: the one list every component uses to tell function words from content words.

It is NLTK's English list (179 words: articles, pronouns, auxiliaries, prepositions, wh-words, contractions),
as bm25s ships it (``bm25s.stopwords.STOPWORDS_EN_PLUS``) — bm25s is a dependency, so nothing is downloaded at
run time (NLTK itself would need ``nltk.download``) — plus the modal verbs that list leaves out although it
has "can", "will" and "should" ("It may have contributed to..." has no content word before the connective),
minus "won" and "don", which it holds as halves of "won't" / "don't" split at the apostrophe but which our
tokenizers only meet as words ("who won the award", "Don Quixote"). Users: question simplification (CDF-RAG's
refinement), the lexical entity matcher (CatRAG's anchors), causal span filtering and the lexical evaluation
metrics (groundedness, causal coverage); entity-name comparison (HugRAG's dedup) ignores only the
:data:`NAME_PARTICLES` and causal node names drop only their :data:`LEADING_DETERMINERS`. The BM25 retriever
and lexical seeding name bm25s's own ``"en"`` list, which is its tokenizer's setting.
"""

from __future__ import annotations

from functools import cache

MODAL_VERBS = frozenset(["may", "might", "must", "could", "would", "shall", "ought"])

# The stop words that do not tell two entity names apart: articles, prepositions, "and", the possessive "s".
# Pronouns and the rest of the list do ("his country" is not "her country"), so HugRAG's dedup ignores only
# these.
NAME_PARTICLES = frozenset(["the", "a", "an", "of", "in", "on", "at", "for", "and", "to", "by", "with", "from",
                            "s"])
CONTRACTION_HALVES_THAT_ARE_WORDS = frozenset(["won", "don"])

# The determiners a causal span may start with and still name the same node ("the flood", "its flood", "flood"):
# articles and the possessive determiners. Not the stop-word list: dropping every leading stop word would also
# strip "after", "which", "this"... and change the causal graph's node names (and the index keyed on them).
LEADING_DETERMINERS = frozenset(["the", "a", "an", "its", "their", "his", "her"])


@cache
def english_stopwords() -> frozenset[str]:
    """NLTK's English stop words (lower case), from bm25s, with :data:`MODAL_VERBS` and without
    :data:`CONTRACTION_HALVES_THAT_ARE_WORDS`."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return (frozenset(STOPWORDS_EN_PLUS) | MODAL_VERBS) - CONTRACTION_HALVES_THAT_ARE_WORDS


def is_stopword(word: str) -> bool:
    """Whether ``word`` (any case) is an English stop word."""
    return word.lower() in english_stopwords()


__all__ = ["LEADING_DETERMINERS", "MODAL_VERBS", "NAME_PARTICLES", "english_stopwords", "is_stopword"]
