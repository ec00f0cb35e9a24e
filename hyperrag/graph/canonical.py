"""Entity-name canonicalisation: one spelling per entity across passages."""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^\w]+", flags=re.UNICODE)


def canonical_name(name: str) -> str:
    """NFKC, lower case, punctuation to spaces, whitespace collapsed.

    >>> canonical_name("  Marie  Curie's ")
    'marie curie s'
    """
    text = unicodedata.normalize("NFKC", name).lower()
    text = _NON_WORD.sub(" ", text).replace("_", " ")
    return " ".join(text.split())
