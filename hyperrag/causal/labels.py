"""Silver labels for the causal pair classifier, and the marked-text format it reads.

A training example is one sentence with two marked spans, ``[E1] first [/E1]`` and ``[E2] second [/E2]``;
label 1 means "E1 causes E2". Labels come from:

* ``connective`` — a *strong* connective candidate (``X led to Y``, ``Y because X``...) marked cause → effect: 1;
* ``reversed`` — the same candidate marked effect → cause: 0 (teaches direction, not just "is there a
  connective");
* ``openie_negative`` — subject/object of an OpenIE triple with a plainly non-causal relation (``born in``,
  ``located in``, ``married``...) in its sentence, both orders: 0;
* ``adjacent`` — the last clause of a sentence and the first of the next, when neither sentence holds any
  connective (no explicit causal link; silver, hence noisy): 0;
* ``llm`` (optional) — the ``causal_pair_verification`` verdict on weak/OpenIE candidates: 1 for the verified
  direction, 0 for the other direction (and for both when the LLM says "none").

Weak connectives (``after``, ``since``...) and causal OpenIE relations never give labels by themselves: they
are what the trained classifier is for.

Connective dropout (``mask_rate``): in that share of the examples the connective (or relation) is replaced by
``[C]`` — and ``[C]`` is inserted at the join of the adjacent-sentence negatives — so the classifier learns to judge
a pair both *with* its connective (direction comes from it) and *without* (from what the spans say). The graph
builder shows the classifier strong candidates as they are and weak/OpenIE candidates masked: their connective
(``after``, ``since``) is exactly what does not tell whether the pair is causal. A positive and its reversal share
the masking draw.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hyperrag.causal.candidates import CandidatePair, Candidates

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)

MARKERS = ("[E1]", "[/E1]", "[E2]", "[/E2]", "[C]")


def mark_pair(sentence: str, first: tuple[int, str], second: tuple[int, str], window: int = 80,
              mask: tuple[int, int] | None = None) -> str | None:
    """``sentence`` with ``[E1]..[/E1]`` around ``first`` and ``[E2]..[/E2]`` around ``second``.

    Args:
        first / second: ``(char offset, span)``; an offset of -1 is looked up with ``str.find``.
        window: characters kept on each side of the two spans (long sentences are cropped, so the markers
            survive tokenizer truncation).
        mask: ``(start, end)`` characters replaced by ``[C]`` (the connective: the classifier then has to judge
            causality from the content of the spans, not from the connective word); ignored when it overlaps a
            span; ``start == end`` inserts ``[C]``.
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
    # edits: (start, end, replacement), left to right; at a tie: closing markers, then [C], then opening ones
    edits = [(a0, a0, "[E1] "), (a1, a1, " [/E1]"), (b0, b0, "[E2] "), (b1, b1, " [/E2]")]
    if mask is not None and mask[0] >= 0:
        m0, m1 = mask
        if not any(m0 < y and x < m1 for x, y in spans) and not any(x < m0 < y for x, y in spans):
            edits.append((m0, m1, "[C]" if m1 > m0 else "[C] "))
    edits.sort(key=lambda e: (e[0], 0 if "/" in e[2] else 1 if "[C]" in e[2] else 2))
    lo = max(0, min(a0, b0) - window)
    hi = min(len(sentence), max(a1, b1) + window)
    out, last = [], lo
    for x, y, rep in edits:
        out.append(sentence[last:x])
        out.append(rep)
        last = max(last, y)
    out.append(sentence[last:hi])
    return ("… " if lo > 0 else "") + "".join(out).strip() + (" …" if hi < len(sentence) else "")


def mark_candidate(c: CandidatePair, reverse: bool = False, mask_connective: bool = True) -> str | None:
    """The candidate marked cause → effect (or effect → cause with ``reverse``), its connective masked."""
    cause, effect = (c.cause_char, c.cause), (c.effect_char, c.effect)
    mask = (c.connective_char, c.connective_end) if mask_connective and c.connective_char >= 0 else None
    return mark_pair(c.sentence, effect, cause, mask=mask) if reverse else mark_pair(c.sentence, cause, effect, mask=mask)


@dataclass
class SilverExample:
    text: str  # marked sentence
    label: int  # 1: E1 causes E2
    group: int  # passage position (train/held-out split by passage)
    source: str  # connective | reversed | openie_negative | adjacent | llm
    masked: bool = False  # the connective is masked as [C]


@dataclass
class SilverSet:
    examples: list[SilverExample]

    def __len__(self) -> int:
        return len(self.examples)

    @property
    def labels(self) -> list[int]:
        return [e.label for e in self.examples]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {"examples": len(self.examples), "positive": sum(self.labels),
                               "masked": sum(e.masked for e in self.examples)}
        for e in self.examples:
            out[f"source_{e.source}"] = out.get(f"source_{e.source}", 0) + 1
        return out


def llm_verdicts(llm: LanguageModel, pairs: Sequence[CandidatePair]) -> list[dict[str, Any] | None]:
    """``causal_pair_verification`` on each pair (A = candidate cause, B = candidate effect, its sentence as
    context); None where the call failed or no LLM is available."""
    if not pairs or not getattr(llm, "available", False):
        return [None] * len(pairs)
    inputs = [{"a": p.cause, "b": p.effect, "context": [p.sentence]} for p in pairs]
    results = llm.complete_structured_batch("causal_pair_verification", inputs, progress="causal pairs")
    return [r.value if r.ok else None for r in results]


def build_silver_set(candidates: Candidates, negative_ratio: float = 1.0, reversed_negatives: bool = True,
                     adjacent_ratio: float = 1.0, mask_rate: float = 0.5, seed: int = 0,
                     llm: LanguageModel | None = None, llm_max_pairs: int = 0) -> SilverSet:
    """Silver-labelled examples from a corpus's candidates (see the module docstring).

    Args:
        candidates: output of :func:`~hyperrag.causal.candidates.extract_candidates`.
        negative_ratio: OpenIE non-causal negatives per positive (pairs, each in both orders).
        reversed_negatives: add every positive reversed as a negative.
        adjacent_ratio: adjacent-sentence negatives per positive.
        mask_rate: share of examples whose connective is masked as ``[C]`` (connective dropout).
        seed: sampling of the negatives and of the masking.
        llm: optional LLM for verifier labels on weak/OpenIE candidates.
        llm_max_pairs: at most this many candidates sent to the LLM (0 = none).
    """
    rng = random.Random(seed)
    examples: list[SilverExample] = []

    def add(c: CandidatePair, labels: Sequence[tuple[bool, int, str]]) -> bool:
        """Mark ``c`` once per ``(reverse, label, source)`` under one masking draw; all or nothing."""
        masked = rng.random() < mask_rate
        texts = [mark_candidate(c, reverse=rev, mask_connective=masked) for rev, _, _ in labels]
        if any(t is None for t in texts):
            return False
        examples.extend(SilverExample(t, y, c.passage, src, masked)  # type: ignore[arg-type]
                        for t, (_, y, src) in zip(texts, labels))
        return True

    for c in candidates.pairs:
        if c.strength == "strong":
            add(c, [(False, 1, "connective")] + ([(True, 0, "reversed")] if reversed_negatives else []))
    n_pos = sum(e.label for e in examples)
    pool = list(candidates.non_causal)
    rng.shuffle(pool)
    added = 0
    for c in pool:
        if added >= negative_ratio * n_pos / 2:
            break
        if add(c, [(False, 0, "openie_negative"), (True, 0, "openie_negative")]):
            added += 1
    adjacent = list(candidates.adjacent)
    rng.shuffle(adjacent)
    added = 0
    for c in adjacent:
        if added >= adjacent_ratio * n_pos:
            break
        if add(c, [(False, 0, "adjacent")]):
            added += 1
    if llm_max_pairs and getattr(llm, "available", False):
        todo = [c for c in candidates.pairs if c.strength != "strong"][:llm_max_pairs]
        for c, verdict in zip(todo, llm_verdicts(llm, todo)):
            if verdict is None:
                continue
            fwd, rev = mark_candidate(c), mark_candidate(c, reverse=True)  # weak pairs are always shown masked
            if fwd is None or rev is None:
                continue
            examples.append(SilverExample(fwd, int(verdict["direction"] == "a->b"), c.passage, "llm", True))
            examples.append(SilverExample(rev, int(verdict["direction"] == "b->a"), c.passage, "llm", True))
    log.info("silver causal pairs: %s", SilverSet(examples).counts())
    return SilverSet(examples)


def split_by_group(examples: Sequence[SilverExample], val_fraction: float = 0.2,
                   seed: int = 0) -> tuple[list[int], list[int]]:
    """Train / held-out example indices, whole passages on one side (no sentence leaks across)."""
    groups = sorted({e.group for e in examples})
    rng = random.Random(seed)
    rng.shuffle(groups)
    n_val = max(1, round(val_fraction * len(groups))) if len(groups) > 1 else 0
    held = set(groups[:n_val])
    train = [i for i, e in enumerate(examples) if e.group not in held]
    val = [i for i, e in enumerate(examples) if e.group in held]
    return train, val


__all__ = ["MARKERS", "SilverExample", "SilverSet", "build_silver_set", "llm_verdicts", "mark_candidate",
           "mark_pair", "split_by_group"]
