"""Groundedness: the share of an answer's claims that its context supports; hallucination rate = 1 − that.

Two judges, same contract (per answered query a score in [0, 1], or ``None`` when nothing was judged):

* :func:`llm_groundedness` — the LLM splits the answer into atomic claims (``claim_extraction``) and checks
  each against the context passages (``claim_support``); a claim counts as grounded only when ``supported``;
* :func:`lexical_groundedness` — no LLM: each answer sentence is a claim, grounded when at least
  ``threshold`` of its content words (SQuAD-normalised, stopwords removed) occur in the context.

Unanswered queries (empty answers or explicit abstentions such as "unknown") are not judged: an abstention
is not a hallucination.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperrag.eval.text import content_tokens, is_abstention
from hyperrag.utils.sentences import split_sentences

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)


def lexical_claims(answer: str) -> list[str]:
    """The answer's sentences that carry content words (a bare short answer is one claim)."""
    return [s for s in split_sentences(answer) if content_tokens(s)]


def lexical_claim_supported(claim: str, context_vocab: set[str], threshold: float = 0.8) -> bool:
    tokens = set(content_tokens(claim))
    return bool(tokens) and len(tokens & context_vocab) / len(tokens) >= threshold


def lexical_groundedness(answer: str | None, context: str, threshold: float = 0.8) -> float | None:
    """Share of the answer's sentence claims whose content words are (≥ ``threshold``) in ``context``.

    Returns ``None`` for unanswered queries or answers without content words.
    """
    if is_abstention(answer):
        return None
    claims = lexical_claims(str(answer))
    if not claims:
        return None
    vocab = set(content_tokens(context))
    return sum(lexical_claim_supported(c, vocab, threshold) for c in claims) / len(claims)


def llm_groundedness(llm: LanguageModel, answers: Sequence[str | None],
                     contexts: Sequence[Sequence[tuple[str, str]]],
                     questions: Sequence[str] | None = None,
                     progress: bool | str = False) -> list[dict[str, Any] | None]:
    """Judge every answered query with the LLM.

    Args:
        llm: an available :class:`hyperrag.llm.LLM`.
        answers: B answers (``None``/empty/abstentions are skipped).
        contexts: per query, the ``(passage_id, text)`` pairs the answer was generated from.
        questions: B questions (let the claim extractor resolve elliptic answers such as "Warsaw").
    Returns:
        per query ``None`` (not judged) or ``{"score": float, "claims": [{"claim", "verdict", "evidence"}]}``.
    """
    todo = [i for i, a in enumerate(answers) if not is_abstention(a)]
    extraction = llm.complete_structured_batch(
        "claim_extraction", [{"text": answers[i], **({"question": questions[i]} if questions else {})} for i in todo],
        progress=progress and "claims") if todo else []
    claims: dict[int, list[str]] = {}
    failed = 0
    for i, res in zip(todo, extraction):
        if res.ok and res.value:
            claims[i] = list(res.value)
        elif not res.ok:
            failed += 1
    flat = [(i, c) for i in claims for c in claims[i]]
    verdicts = llm.complete_structured_batch(
        "claim_support", [{"claim": c, "passages": list(contexts[i])} for i, c in flat],
        progress=progress and "claim support") if flat else []
    per: dict[int, list[dict[str, Any]]] = {i: [] for i in claims}
    for (i, c), res in zip(flat, verdicts):
        if res.ok:
            per[i].append({"claim": c, "verdict": res.value["verdict"], "evidence": res.value["evidence"]})
        else:
            failed += 1
    if failed:
        log.warning("groundedness: %d LLM calls failed (those claims/answers are not judged)", failed)
    out: list[dict[str, Any] | None] = [None] * len(answers)
    for i, judged in per.items():
        if judged:
            score = sum(j["verdict"] == "supported" for j in judged) / len(judged)
            out[i] = {"score": score, "claims": judged}
    return out


def hallucination_rate(groundedness: Sequence[float | None]) -> float | None:
    """Mean of ``1 − groundedness`` over the judged (answered) queries, in [0, 1]; ``None`` if none."""
    judged = [g for g in groundedness if g is not None]
    return None if not judged else sum(1.0 - g for g in judged) / len(judged)
