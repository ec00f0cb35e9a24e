"""The marked-text format the causal pair classifier reads: a sentence with its two candidate spans marked.

``[E1] candidate cause [/E1]`` and ``[E2] candidate effect [/E2]``; the classifier gives P(E1 causes E2). It is the
format of UniCausal's pair classification data (``<ARG0>``/``<ARG1>``, converted by
:func:`hyperrag.data.unicausal.convert_markup`) that the classifier is trained on, and the graph builder marks the
corpus's candidate pairs the same way (:func:`mark_candidate`) — once in each order, so the classifier also decides
the direction.
"""

from __future__ import annotations

from hyperrag.causal.candidates import CandidatePair

MARKERS = ("[E1]", "[/E1]", "[E2]", "[/E2]")
#: bump when the marked text changes: classifiers trained on another format are not picked (their
#: compatibility key differs, :func:`hyperrag.causal.classifier.classifier_compatibility`)
MARKING_FORMAT = "unicausal-e1e2-v1"


def mark_pair(sentence: str, first: tuple[int, str], second: tuple[int, str], window: int = 160) -> str | None:
    """``sentence`` with ``[E1]..[/E1]`` around ``first`` and ``[E2]..[/E2]`` around ``second``.

    Args:
        first / second: ``(char offset, span)``; an offset of -1 is looked up with ``str.find``.
        window: characters kept on each side of the two spans (long sentences are cropped, so the markers
            survive tokenizer truncation).
    Returns:
        The marked text, or None when a span is not in the sentence or the spans overlap.
    """
    spans = []
    for off, text in (first, second):
        if off < 0 or sentence[off : off + len(text)] != text:
            off = sentence.find(text)
        if off < 0 or not text:
            return None
        spans.append((off, off + len(text)))
    (a0, a1), (b0, b1) = spans
    if a0 < b1 and b0 < a1:
        return None
    # edits left to right; at a tie the closing marker of one span comes before the opening one of the next
    edits = sorted([(a0, "[E1] "), (a1, " [/E1]"), (b0, "[E2] "), (b1, " [/E2]")],
                   key=lambda e: (e[0], 0 if "/" in e[1] else 1))
    lo = max(0, min(a0, b0) - window)
    hi = min(len(sentence), max(a1, b1) + window)
    out, last = [], lo
    for x, rep in edits:
        out.append(sentence[last:x])
        out.append(rep)
        last = x
    out.append(sentence[last:hi])
    return ("… " if lo > 0 else "") + " ".join("".join(out).split()) + (" …" if hi < len(sentence) else "")


def mark_candidate(c: CandidatePair, reverse: bool = False) -> str | None:
    """The candidate marked cause → effect, or effect → cause with ``reverse`` (its connective as written)."""
    cause, effect = (c.cause_char, c.cause), (c.effect_char, c.effect)
    return mark_pair(c.sentence, effect, cause) if reverse else mark_pair(c.sentence, cause, effect)


__all__ = ["MARKERS", "MARKING_FORMAT", "mark_candidate", "mark_pair"]
