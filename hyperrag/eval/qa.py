"""Answer metrics with SQuAD-style normalisation: exact match, token F1, joint success rate (JSR), and the
accuracy of multiple-choice answers (an answer read back to one of the options by letter or text).

JSR follows CatRAG (§4.3): a query succeeds when the full chain of gold passages was retrieved *and* the
generated response contains the correct answer (a normalised gold answer occurs in it as whole words); for a
multiple-choice query (HoVer's SUPPORTED / NOT_SUPPORTED labels) the response must name the correct option.
"""

from __future__ import annotations

import re
import string
from collections import Counter
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


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised gold answer."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(g) for g in golds))


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """Best token-overlap F1 of the prediction against any gold answer."""
    pred_tokens = normalize_answer(prediction).split()
    best = 0.0
    for gold in golds:
        gold_tokens = normalize_answer(gold).split()
        common = Counter(pred_tokens) & Counter(gold_tokens)
        overlap = sum(common.values())
        if not pred_tokens or not gold_tokens:
            best = max(best, float(pred_tokens == gold_tokens))
            continue
        if overlap == 0:
            continue
        precision, recall = overlap / len(pred_tokens), overlap / len(gold_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def answer_in_response(prediction: str, golds: Sequence[str]) -> float:
    """1.0 when a normalised gold answer occurs in the normalised response as whole words."""
    padded = f" {normalize_answer(prediction)} "
    return float(any(norm and f" {norm} " in padded for norm in map(normalize_answer, golds)))


def response_correct(prediction: str, golds: Sequence[str], options: Sequence[str] | None = None,
                     answer_index: int | None = None) -> float:
    """JSR's answer condition: the response names the correct option (multiple choice), else it contains a
    gold answer."""
    chosen = option_correct(prediction, options or [], answer_index)
    return chosen if chosen is not None else answer_in_response(prediction, golds)


def qa_metrics(predictions: Sequence[str], golds: Sequence[Sequence[str]],
               full_chain: Sequence[float] | None = None, options: Sequence[Sequence[str]] | None = None,
               answer_indices: Sequence[int | None] | None = None) -> dict[str, float]:
    """Mean EM and F1 in percent over queries with gold answers; JSR (full chain retrieved *and* the response
    contains the answer, see :func:`response_correct`) when ``full_chain`` (per query 0/1, e.g. fcr@5) is
    given; ``options`` / ``answer_indices`` per query for multiple-choice queries."""
    rows = [(i, p, g) for i, (p, g) in enumerate(zip(predictions, golds)) if g]
    if not rows:
        return {}
    em = [exact_match(p, g) for _, p, g in rows]
    out = {"em": 100.0 * sum(em) / len(rows), "f1": 100.0 * sum(token_f1(p, g) for _, p, g in rows) / len(rows)}
    if full_chain is not None:
        hit = [response_correct(p, g, options[i] if options else None, answer_indices[i] if answer_indices else None)
               for i, p, g in rows]
        out["jsr"] = 100.0 * sum(full_chain[i] * h for (i, _, _), h in zip(rows, hit)) / len(rows)
    return out


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


def option_correct(prediction: str, options: Sequence[str], answer_index: int | None) -> float | None:
    """1.0 when the prediction names the correct option, 0.0 when not, ``None`` when the query is not
    multiple choice or its correct option is unknown."""
    if not options or answer_index is None:
        return None
    return float(parse_option(prediction, options) == answer_index)


def option_accuracy(predictions: Sequence[str], options: Sequence[Sequence[str]],
                    answer_indices: Sequence[int | None]) -> dict[str, float]:
    """``accuracy``: percent of multiple-choice queries (options and a known correct index) whose answer
    names the correct option; ``{}`` when there are none."""
    scored = [c for c in map(option_correct, predictions, options, answer_indices) if c is not None]
    return {"accuracy": 100.0 * sum(scored) / len(scored)} if scored else {}
