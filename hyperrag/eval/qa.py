"""Answer metrics with SQuAD-style normalisation: exact match, token F1, answer containment (Match-Acc, as
HyperRAG's Table 1 and HippoRAG report it: a gold answer occurs in the response, :func:`answer_in_response`),
joint success rate (JSR), and the accuracy of multiple-choice answers (an answer read back to one of the options
by letter or text).

JSR follows CatRAG (§4.3): a query succeeds when the full chain of gold passages was retrieved *and* the
generated response contains the correct answer (a normalised gold answer occurs in it as whole words); for a
multiple-choice query (HoVer's SUPPORTED / NOT_SUPPORTED labels) the response must name the correct option.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from hyperrag.eval.retrieval import full_chain_at_k
from hyperrag.utils.answers import OPTION_LETTERS, normalize_answer, option_letter, parse_option

__all__ = ["OPTION_LETTERS", "answer_scores", "exact_match", "normalize_answer", "option_accuracy", "option_correct",
           "option_letter", "parse_option", "qa_metrics", "token_f1", "token_precision_recall"]


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """1.0 when the normalised prediction equals any normalised gold answer."""
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(g) for g in golds))


def _overlap(pred_tokens: list[str], gold: str) -> tuple[float, float, float]:
    """Token-overlap (F1, precision, recall) of normalised prediction tokens against one gold answer; an empty side
    scores 1.0 only against another empty one."""
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        same = float(pred_tokens == gold_tokens)
        return same, same, same
    overlap = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if not overlap:
        return 0.0, 0.0, 0.0
    p, r = overlap / len(pred_tokens), overlap / len(gold_tokens)
    return 2 * p * r / (p + r), p, r


def token_f1(prediction: str, golds: Sequence[str]) -> float:
    """Best token-overlap F1 of the prediction against any gold answer."""
    pred_tokens = normalize_answer(prediction).split()
    return max((_overlap(pred_tokens, g)[0] for g in golds), default=0.0)


def token_precision_recall(prediction: str, golds: Sequence[str]) -> tuple[float, float]:
    """Token-overlap precision and recall of the prediction against the gold answer it overlaps best (the one
    :func:`token_f1` scores; CDF-RAG's Tables 3-5 report precision and recall beside F1)."""
    pred_tokens = normalize_answer(prediction).split()
    _, p, r = max((_overlap(pred_tokens, g) for g in golds), default=(0.0, 0.0, 0.0))
    return p, r


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


#: datasets whose gold answers are full answers, not short spans: F1 scores the whole response against them
#: (HugRAG §5.1 / F.2: HolisQA's answers are 2-4 sentences; its short answer would depress every F1)
FULL_ANSWER_DATASETS = ("holisqa",)


def f1_answer_of(dataset_name: str) -> str:
    """Which answer EM / F1 score on ``dataset_name``: ``full`` (the whole response: HolisQA and its domains) or
    ``short`` (an explanatory response's short answer, else the response)."""
    return "full" if dataset_name.lower().startswith(FULL_ANSWER_DATASETS) else "short"


def qa_metrics(predictions: Sequence[str], golds: Sequence[Sequence[str]],
               full_chain: Sequence[float] | None = None, options: Sequence[Sequence[str]] | None = None,
               answer_indices: Sequence[int | None] | None = None,
               short_answers: Sequence[str | None] | None = None, f1_answer: str = "short") -> dict[str, float]:
    """Mean EM, F1 and Match-Acc (``match_acc``: a gold answer contained in the response) in percent over
    queries with gold answers; JSR (full chain retrieved *and* the response contains the answer, see
    :func:`response_correct`) when ``full_chain`` (per query 0/1, e.g. fcr@5) is given; ``options`` /
    ``answer_indices`` per query for multiple-choice queries. ``short_answers``: per query the bare answer of an
    explanatory response (``answer_style=explanatory``), which EM and F1 score instead of the whole response;
    ``f1_answer="full"`` scores the whole response (:func:`f1_answer_of`: datasets with full gold answers)."""
    rows = [(i, p, g) for i, (p, g) in enumerate(zip(predictions, golds)) if g]
    if not rows:
        return {}
    full = f1_answer == "full"
    short = [p if full else scored_answer(p, short_answers[i] if short_answers else None) for i, p, _ in rows]
    em = [exact_match(s, g) for s, (_, _, g) in zip(short, rows)]
    out = {"em": 100.0 * sum(em) / len(rows),
           "f1": 100.0 * sum(token_f1(s, g) for s, (_, _, g) in zip(short, rows)) / len(rows),
           "match_acc": 100.0 * sum(answer_in_response(p, g) for _, p, g in rows) / len(rows)}
    if full_chain is not None:
        hit = [response_correct(p, g, options[i] if options else None, answer_indices[i] if answer_indices else None)
               for i, p, g in rows]
        out["jsr"] = 100.0 * sum(full_chain[i] * h for (i, _, _), h in zip(rows, hit)) / len(rows)
    return out


def scored_answer(response: str, short_answer: str | None) -> str:
    """What EM and F1 score: an explanatory response's short answer when it gave one, else the response."""
    return short_answer if isinstance(short_answer, str) and short_answer.strip() else response


def answer_scores(row: Mapping[str, Any], top_n: int, f1_answer: str = "short") -> dict[str, float]:
    """One answered prediction row's ``em``, ``f1`` (of its short answer; of the whole response with
    ``f1_answer="full"``), ``match_acc`` and ``jsr`` (its answer correct and the full gold chain in its top
    ``top_n``), each in [0, 1]."""
    golds, pred = row.get("answers") or [], row.get("answer") or ""
    # an explanatory response's bare answer, unless the dataset's gold is a full answer
    short = pred if f1_answer == "full" else scored_answer(pred, row.get("short_answer"))
    chain = full_chain_at_k(row["ranked_ids"], row["gold_ids"], top_n) if row.get("gold_ids") else 0.0
    hit = response_correct(pred, golds, row.get("options"), row.get("answer_index"))
    return {"em": exact_match(short, golds), "f1": token_f1(short, golds),
            "match_acc": answer_in_response(pred, golds), "jsr": hit * chain}


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
