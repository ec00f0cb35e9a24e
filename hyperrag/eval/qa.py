"""Answer metrics with SQuAD-style normalisation: exact match, token F1, joint success rate (JSR)."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b", flags=re.UNICODE)
_PUNCT = set(string.punctuation)


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


def qa_metrics(predictions: Sequence[str], golds: Sequence[Sequence[str]],
               full_chain: Sequence[float] | None = None) -> dict[str, float]:
    """Mean EM and F1 in percent over queries with gold answers; JSR (full chain retrieved *and* EM) when
    ``full_chain`` (per query 0/1, e.g. fcr@5) is given."""
    rows = [(i, p, g) for i, (p, g) in enumerate(zip(predictions, golds)) if g]
    if not rows:
        return {}
    em = [exact_match(p, g) for _, p, g in rows]
    out = {"em": 100.0 * sum(em) / len(rows), "f1": 100.0 * sum(token_f1(p, g) for _, p, g in rows) / len(rows)}
    if full_chain is not None:
        out["jsr"] = 100.0 * sum(full_chain[i] * e for (i, _, _), e in zip(rows, em)) / len(rows)
    return out
