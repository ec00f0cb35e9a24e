"""Text helpers shared by the evaluation metrics and the HolisQA builder: content tokens and abstention detection
(sentences: :mod:`hyperrag.utils.sentences`). Deterministic, nothing to download."""

from __future__ import annotations

import re

from hyperrag.eval.qa import normalize_answer
from hyperrag.utils.answers import mentions
from hyperrag.utils.stopwords import english_stopwords

ABSTENTIONS = frozenset(normalize_answer(a) for a in (
    "", "unknown", "i don't know", "i do not know", "no answer", "none", "n/a", "not enough information",
    "insufficient information", "cannot be determined", "cannot answer", "the passages do not say",
    "not mentioned", "not stated", "unanswerable"))


def content_tokens(text: str) -> list[str]:
    """SQuAD-normalised tokens minus stopwords (the words a claim's support is judged on)."""
    stop = english_stopwords()
    return [t for t in normalize_answer(text).split() if t not in stop]


#: free-text "cannot answer" forms an explanatory reader writes (matched on the answer's first sentence, lower-cased):
#: "The passages do not give the answer.", "The evidence does not give the answer." (the oracle's own), "The context
#: does not mention ...", "There is not enough information ...", "I cannot determine ...", "It is not stated ..."
_SOURCE = (r"(?:the |these |this |provided |given |retrieved )*"
           r"(?:passages?|context|evidence|documents?|texts?|sources?|information|knowledge)"
           r"(?: provided| given| above| retrieved)?")
_VERB = r"(?:give|say|state|mention|contain|provide|include|specify|answer|tell|indicate|support|hold)s?"
ABSTENTION_FORMS = re.compile("|".join((
    rf"^{_SOURCE} (?:do|does|did) not {_VERB}\b",
    rf"^{_SOURCE} (?:do|does|did)n't {_VERB}\b",
    r"^(?:there is |there's )?(?:not enough|insufficient|no) (?:information|evidence|context|data)\b",
    (r"^(?:i |we )?(?:cannot|can't|can not|could not|couldn't|am unable to|are unable to|unable to) "
    r"(?:answer|determine|tell|say|find|be determined|be answered)\b"),
    r"^(?:it |this |the answer )?(?:cannot|can't|can not) be (?:determined|answered|found)\b",
    r"^(?:it |this |the answer )?is not (?:mentioned|stated|specified|given|known|provided)\b",
    r"^(?:the answer is )?(?:unknown|not known)$",
    r"^i (?:do not|don't) know\b",
)))
_FIRST_SENTENCE = re.compile(r"^(.+?)(?:[.!?](?:\s|$)|$)", re.DOTALL)


def is_abstention(answer: str | None) -> bool:
    """True for empty answers and "I don't know"-style non-answers (not counted as answered): the whole answer one
    of :data:`ABSTENTIONS`, or its first sentence a free-text "cannot answer" form (:data:`ABSTENTION_FORMS`:
    an explanatory reader's "The passages do not give the answer."). An answer whose first sentence answers ("The
    answer is X. The passages do not say when.") is not an abstention."""
    if answer is None or normalize_answer(answer) in ABSTENTIONS:
        return True
    first = _FIRST_SENTENCE.match(" ".join(str(answer).split()))
    sentence = first.group(1).strip().lower().replace("’", "'") if first else ""
    return bool(ABSTENTION_FORMS.search(sentence))


def contains_text(haystack_normalized: str, needle: str) -> bool:
    """Whether ``needle`` (normalised) occurs in an already normalised text, on token boundaries."""
    return mentions(haystack_normalized, normalize_answer(needle))
