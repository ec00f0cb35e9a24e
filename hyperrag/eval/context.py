"""Context metrics: how much of the gold evidence the retrieved context (the top passages a reader sees) holds.

* :func:`context_recall` — share of gold passages, or of gold *sentences* when the query file gives them
  (HolisQA-style files do), that the context covers;
* :func:`causal_coverage` — share of gold causal pairs (cause, effect) with both ends in the context.

A gold unit is covered when its passage id is among the context's passage ids, or, for units given as text,
when its normalised text occurs in the normalised context text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hyperrag.eval.qa import normalize_answer
from hyperrag.eval.text import contains_text

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


def _sentence_covered(sentence: Any, ids: set[str], context_norm: str | None) -> bool:
    if isinstance(sentence, Mapping):
        holders = [sentence.get("passage_id"), *(sentence.get("passage_ids") or ())]
        if any(pid is not None and str(pid) in ids for pid in holders):
            return True
        text = sentence.get("text")
    else:
        text = sentence
    return bool(text) and context_norm is not None and contains_text(context_norm, str(text))


def context_recall(context_ids: Sequence[str], gold_ids: Sequence[str] = (),
                   gold_sentences: Sequence[Any] | None = None, context_text: str | None = None) -> float | None:
    """Share (0–1) of the gold evidence covered by the context; ``None`` when the query has no gold.

    Args:
        context_ids: passage ids of the retrieved context (e.g. the top 5 the reader saw).
        gold_ids: gold passage ids (used when there are no gold sentences).
        gold_sentences: gold sentences, each ``{"id", "passage_id", "text"}`` (optionally ``passage_ids``: every
            passage holding it, any one of which covers it) or a plain string.
        context_text: the context's text, to match sentences given without a passage id.
    """
    ids = {str(i) for i in context_ids}
    if gold_sentences:
        norm = normalize_answer(context_text) if context_text is not None else None
        return sum(_sentence_covered(s, ids, norm) for s in gold_sentences) / len(gold_sentences)
    gold = set(map(str, gold_ids))
    if not gold:
        return None
    return len(gold & ids) / len(gold)


def row_context_recall(row: Mapping[str, Any], top_n: int) -> float | None:
    """LLM-free context recall of one prediction row, as the run scored it: its gold sentences (else gold passages)
    covered by its top ``top_n`` ranked passages or by the text of the evidence it recorded answering from
    (``details["evidence"]``: HugRAG's S*); ``None`` without gold. Needs no corpus: a sentence's holding passages
    are in the row (``passage_ids``)."""
    details = row.get("details")
    evidence = details.get("evidence") if isinstance(details, Mapping) else None
    text = "\n".join(map(str, evidence)) if isinstance(evidence, list) and evidence else None
    return context_recall([str(i) for i in row.get("ranked_ids", [])[:top_n]], row.get("gold_ids") or [],
                          row.get("gold_sentences") or None, text)


def _pair_ends(pair: Any) -> tuple[str, str]:
    if isinstance(pair, Mapping):
        return str(pair["cause"]), str(pair["effect"])
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        return str(pair[0]), str(pair[1])
    raise ValueError(f"a causal pair is [cause, effect] or {{'cause': ..., 'effect': ...}}, got {pair!r}")


def causal_coverage(pairs: Sequence[Any], context_ids: Sequence[str], context_text: str | None = None) -> float | None:
    """Share (0–1) of gold causal pairs whose cause *and* effect are both in the context; ``None`` without pairs.

    An end is a passage id (covered when retrieved) or a text span such as an entity or event (covered when
    its normalised text occurs in the context text).
    """
    if not pairs:
        return None
    ids = {str(i) for i in context_ids}
    norm = normalize_answer(context_text) if context_text is not None else None

    def covered(end: str) -> bool:
        return end in ids or (norm is not None and contains_text(norm, end))

    return sum(all(covered(e) for e in _pair_ends(p)) for p in pairs) / len(pairs)


def reference_statements(answer: str) -> list[str]:
    """The reference answer's statements (Ragas splits the reference into sentences; a short answer is one)."""
    from hyperrag.eval.groundedness import lexical_claims

    return lexical_claims(answer)


def lexical_claim_recall(reference: str, context: str, threshold: float = 0.8) -> float | None:
    """Context recall without an LLM (a labelled fallback): the share of the reference's statements whose content
    words are (≥ ``threshold``) in the context; an empty context (no retrieval, a failed filter) scores 0;
    ``None`` without a reference."""
    from hyperrag.eval.groundedness import lexical_claim_supported
    from hyperrag.eval.text import content_tokens

    statements = reference_statements(reference)
    if not statements:
        return None
    vocab = set(content_tokens(context))
    return sum(lexical_claim_supported(s, vocab, threshold) for s in statements) / len(statements)


def llm_claim_recall(llm: LanguageModel, questions: Sequence[str], references: Sequence[str], contexts: Sequence[str],
                     progress: bool | str = False) -> list[dict[str, Any] | None]:
    """Ragas context recall with an LLM judge (task ``context_recall``): per query ``{"score", "attributed"}``, 0 for
    an empty context, ``None`` without a reference or when the judge failed (``{"judge_error": ...}``)."""
    out: list[dict[str, Any] | None] = [None] * len(questions)
    todo = []
    for i, (ref, ctx) in enumerate(zip(references, contexts)):
        statements = reference_statements(ref)
        if not statements:
            continue
        if not ctx.strip():
            out[i] = {"score": 0.0, "attributed": [False] * len(statements)}
            continue
        todo.append((i, {"question": questions[i], "context": ctx, "statements": statements}))
    if not todo:
        return out
    results = llm.complete_structured_batch("context_recall", [x for _, x in todo],
                                            progress=progress and "context recall")
    for (i, _), res in zip(todo, results):
        if res.ok:
            flags = list(res.value)
            out[i] = {"score": sum(flags) / len(flags), "attributed": flags}
        else:
            out[i] = {"judge_error": str(res.error_kind or "failed")}
    return out
