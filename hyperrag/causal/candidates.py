"""Candidate (cause, effect) span pairs mined from text: explicit connectives and causal OpenIE relations.

Rule-based (no spaCy): sentences are split by pysbd (:mod:`hyperrag.utils.sentences`), and every explicit causal
connective yields one candidate whose two spans are the clauses it links, oriented by the connective's
semantics:

* ``cause_follows`` connectives (``because``, ``due to``, ``as a result of``, ``caused by``, ``after``...): the
  clause governed by the connective is the cause, the main clause the effect — ``Y because X`` and
  ``Because X, Y`` both give ``X → Y``;
* ``effect_follows`` connectives (``led to``, ``resulted in``, ``caused``, ``therefore``, ``so that``...): the
  clause before is the cause, the clause after the effect; a sentence-initial adverbial (``As a result, Y``)
  takes its cause from the previous sentence.

Each connective is *strong* (an unambiguous causal marker: without a classifier, the rule priors accept it) or
*weak* (``after``, ``following``, ``since``: often only temporal — what the UniCausal-trained classifier is for).
OpenIE triples whose relation is causal (``resulted in``, ``led to``, ``caused``...) give entity-level candidates;
those whose relation is plainly non-causal, and clause pairs of connective-free adjacent sentences, are only
counted (the graph's candidate statistics).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from hyperrag.data.types import Corpus
from hyperrag.utils.sentences import sentence_spans
from hyperrag.utils.stopwords import LEADING_DETERMINERS, is_stopword

# (regex, orientation, strength). Longer phrases first so "as a result of" wins over "as a result".
CONNECTIVES: tuple[tuple[str, str, str], ...] = (
    (r"as a (?:direct )?(?:result|consequence) of", "cause_follows", "strong"),
    (r"as a (?:direct )?(?:result|consequence)", "effect_follows", "strong"),
    (r"because of", "cause_follows", "strong"),
    (r"because", "cause_follows", "strong"),
    (r"due (?:largely |mainly |partly |in part )?to", "cause_follows", "strong"),
    (r"owing to", "cause_follows", "strong"),
    (r"thanks to", "cause_follows", "strong"),
    (r"on account of", "cause_follows", "strong"),
    (r"(?:was |were |is |are |been )?(?:caused|triggered|prompted|brought about) by", "cause_follows", "strong"),
    (r"result(?:ed|ing|s)? from", "cause_follows", "strong"),
    (r"(?:led|leads|lead|leading) to", "effect_follows", "strong"),
    (r"result(?:ed|s|ing)? in", "effect_follows", "strong"),
    (r"(?:caused|causes|causing|triggered|triggers|prompted|brought about|gave rise to|gives rise to)",
     "effect_follows", "strong"),
    (r"contribut(?:ed|es|ing) to", "effect_follows", "strong"),
    (r"so that", "effect_follows", "strong"),
    (r"therefore|consequently|hence|thus", "effect_follows", "strong"),
    (r"after|following", "cause_follows", "weak"),
    (r"since", "cause_follows", "weak"),
)

_CONNECTIVE_RE = re.compile(r"\b(" + "|".join(f"(?:{p})" for p, _, _ in CONNECTIVES) + r")\b", re.IGNORECASE)
_COMPILED = [(re.compile(rf"^(?:{p})$", re.IGNORECASE), o, s) for p, o, s in CONNECTIVES]

# Relation strings of OpenIE triples: causal (→ candidates) and plainly non-causal (counted).
CAUSAL_RELATION = re.compile(
    r"\b(caus\w*|led to|leads? to|leading to|result\w* in|result\w* from|due to|because|trigger\w*|prompt\w*|"
    r"brought about|gave rise|contribut\w* to|responsible for|induc\w*|consequen\w*)\b", re.IGNORECASE)
NON_CAUSAL_RELATION = re.compile(
    r"\b(born|located|is a|is an|was a|was an|capital|part of|member of|married|spouse|named|called|"
    r"founded|established|released|published|directed|produced|written|wrote|starred|plays?|played|"
    r"situated|borders?|lies|lives?|lived|child|daughter|son|father|mother|instance|country|citizen|"
    r"studied|educated|attended|works? (?:for|at)|worked|head(?:quartered|s)?|owned|owns|has|had)\b",
    re.IGNORECASE)

_CLAUSE_STOP = re.compile(r";|:|\s[-–—]+\s|\.\s+(?=[A-Z])|,\s+(?=(?:and|but|while|whereas|which|who|whom|"
                          r"where|although|though|however|as well as|including)\b)|\.\s*$")
_LEADING_JUNK = re.compile(r"^(?:(?:and|but|or|so|which|that|who|then|also|thus|therefore|hence|"
                           r"consequently|however)\b|[,\s(\"'`])+", re.IGNORECASE)
_TRAILING_JUNK = re.compile(r"(?:,|;|:|\s|\band\b|\bbut\b|\bwhich\b|\bthat\b|\bwas\b|\bwere\b|\bis\b)+$",
                            re.IGNORECASE)
_WORD = re.compile(r"\w+", re.UNICODE)
_PAREN = re.compile(r"\s*\([^()]*\)")  # parentheticals are dropped before mining (they break clause spans)


@dataclass(frozen=True)
class CandidatePair:
    """A candidate causal pair ``cause → effect`` with its provenance.

    Attributes:
        cause / effect: the two spans (verbatim substrings of ``sentence`` for connective candidates).
        sentence: the text the spans come from (two sentences joined for cross-sentence adverbials).
        passage: corpus position of the passage.
        sentence_index: position of the (last) sentence in the passage.
        connective: the connective or OpenIE relation that proposed the pair.
        source: ``connective`` or ``openie``.
        strength: ``strong`` (accepted by the rule priors), ``weak`` (scored only), ``openie`` (entity-level
            candidate).
        cause_char / effect_char: start offsets of the spans in ``sentence`` (-1 when not verbatim).
        connective_char / connective_end: where the connective (or OpenIE relation) is in ``sentence`` — what the
            pair classifier sees masked as ``[C]``; equal offsets mark an insertion point (relation not verbatim
            in the sentence, adjacent sentences); -1 when unknown.
    """

    cause: str
    effect: str
    sentence: str
    passage: int
    sentence_index: int
    connective: str
    source: str
    strength: str
    cause_char: int = -1
    effect_char: int = -1
    connective_char: int = -1
    connective_end: int = -1
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> tuple[int, str, str]:
        return (self.passage, normalize_span(self.cause), normalize_span(self.effect))


def normalize_span(text: str) -> str:
    """Canonical node name: lower case, words only, leading articles dropped."""
    words = [w.lower() for w in _WORD.findall(text)]
    while words and words[0] in LEADING_DETERMINERS:
        words = words[1:]
    return " ".join(words)


def content_words(text: str) -> int:
    """Number of words that are not function words."""
    return sum(not is_stopword(w) for w in _WORD.findall(text))


def _orientation(connective: str) -> tuple[str, str]:
    for rx, orient, strength in _COMPILED:
        if rx.match(connective.strip()):
            return orient, strength
    raise KeyError(connective)


def _clip_left(text: str, max_words: int) -> tuple[str, int]:
    """The clause ending at ``len(text)``: after the last clause boundary, at most ``max_words`` words.
    Returns (span, offset of the span in ``text``)."""
    cut = 0
    for m in _CLAUSE_STOP.finditer(text):
        if m.end() < len(text):
            cut = m.end()
    span = text[cut:]
    words = list(re.finditer(r"\S+", span))
    if len(words) > max_words:
        cut += words[-max_words].start()
    return _trim(text, cut, len(text))


def _clip_right(text: str, max_words: int) -> tuple[str, int]:
    """The clause starting at 0: up to the first clause boundary, at most ``max_words`` words."""
    end = len(text)
    m = _CLAUSE_STOP.search(text)
    if m and m.start() > 0:
        end = m.start()
    words = list(re.finditer(r"\S+", text[:end]))
    if len(words) > max_words:
        end = words[max_words - 1].end()
    return _trim(text, 0, end)


def _trim(text: str, start: int, end: int) -> tuple[str, int]:
    span = text[start:end]
    lead = _LEADING_JUNK.match(span)
    if lead:
        start += lead.end()
        span = span[lead.end():]
    trail = _TRAILING_JUNK.search(span)
    if trail and trail.start() > 0:
        span = span[: trail.start()]
    span = span.rstrip(" ,.;:\"'")
    return span, start


def connective_candidates(sentences: Sequence[str], passage: int, max_words: int = 14,
                          min_words: int = 1) -> list[CandidatePair]:
    """Candidates from the explicit connectives of one passage's sentences."""
    out: list[CandidatePair] = []
    for si, sent in enumerate(sentences):
        for m in _CONNECTIVE_RE.finditer(sent):
            conn = m.group(1)
            orient, strength = _orientation(conn)
            before, after = sent[: m.start()], sent[m.end():]
            initial = not before.strip(" ,\"'(")
            text, c_off, e_off, k_off = sent, -1, -1, m.start()
            if orient == "cause_follows":
                if initial:  # "Because X, Y": X up to the first comma, Y the rest
                    comma = after.find(",")
                    if comma < 0:
                        continue
                    cause, c0 = _clip_right(after[:comma], max_words)
                    effect, e0 = _clip_right(after[comma + 1 :].lstrip(), max_words)
                    c_off = m.end() + c0
                    e_off = m.end() + comma + 1 + (len(after[comma + 1 :]) - len(after[comma + 1 :].lstrip())) + e0
                else:  # "Y because X"
                    effect, e_off = _clip_left(before, max_words)
                    cause, c0 = _clip_right(after.lstrip(), max_words)
                    c_off = m.end() + (len(after) - len(after.lstrip())) + c0
            else:
                if initial:  # "As a result, Y" / "Therefore Y": the cause is the previous sentence
                    if si == 0:
                        continue
                    prev = sentences[si - 1]
                    cause, c_off = _clip_left(prev.rstrip(" ."), max_words)
                    text = f"{prev} {sent}"
                    shift = len(prev) + 1
                    k_off = shift + m.start()
                    effect, e0 = _clip_right(after.lstrip(" ,"), max_words)
                    e_off = shift + m.end() + (len(after) - len(after.lstrip(" ,"))) + e0
                else:  # "X led to Y"
                    cause, c_off = _clip_left(before, max_words)
                    effect, e0 = _clip_right(after.lstrip(" ,"), max_words)
                    e_off = m.end() + (len(after) - len(after.lstrip(" ,"))) + e0
            if content_words(cause) < min_words or content_words(effect) < min_words:
                continue
            if normalize_span(cause) == normalize_span(effect):
                continue
            out.append(CandidatePair(cause, effect, text, passage, si, conn.lower(), "connective", strength,
                                     c_off, e_off, k_off, k_off + len(conn)))
    return out


def adjacent_pairs(sentences: Sequence[str], passage: int, max_words: int = 14,
                   min_words: int = 1) -> list[CandidatePair]:
    """Clause pairs across consecutive sentences with no connective at all (no explicit causal link): the last
    clause of sentence i and the first clause of sentence i+1, joined with a space (``connective_char`` is the
    join point). Counted in the candidate statistics, not scored."""
    out: list[CandidatePair] = []
    for si in range(len(sentences) - 1):
        a, b = sentences[si], sentences[si + 1]
        if _CONNECTIVE_RE.search(a) or _CONNECTIVE_RE.search(b):
            continue
        cause, c_off = _clip_left(a.rstrip(" ."), max_words)
        effect, e_off = _clip_right(b, max_words)
        if content_words(cause) < min_words or content_words(effect) < min_words:
            continue
        join = len(a) + 1
        out.append(CandidatePair(cause, effect, f"{a} {b}", passage, si + 1, "", "adjacent", "none", c_off,
                                 join + e_off, join, join))
    return out


def _locate(sentences: Sequence[str], *terms: str) -> int:
    """Index of the first sentence containing every term (case-insensitive), or -1."""
    low = [s.lower() for s in sentences]
    for i, s in enumerate(low):
        if all(t.lower() in s for t in terms):
            return i
    return -1


def _relation_span(sentence: str, relation: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Where the relation words are between the two arguments (whole words), else the insertion point just
    before the later argument."""
    lo, hi = min(a[1], b[1]), max(a[0], b[0])
    if lo <= hi:
        m = re.search(r"\b" + re.escape(relation.strip()) + r"\b", sentence[lo:hi], re.IGNORECASE)
        if m:
            return lo + m.start(), lo + m.end()
    point = max(a[0], b[0])
    return point, point


def openie_candidates(sentences: Sequence[str], triples: Sequence[tuple[str, str, str]],
                      passage: int) -> tuple[list[CandidatePair], list[CandidatePair]]:
    """Entity-level pairs from a passage's OpenIE triples.

    Returns:
        ``(causal, non_causal)``: triples whose relation is causal-ish (subject → object, or object → subject
        for passive forms such as "caused by") and triples whose relation is plainly non-causal; each located
        in the sentence holding both arguments (triples whose arguments share no sentence are skipped).
    """
    causal: list[CandidatePair] = []
    other: list[CandidatePair] = []
    for s, r, o in triples:
        si = _locate(sentences, s, o)
        if si < 0 or normalize_span(s) == normalize_span(o) or not normalize_span(s) or not normalize_span(o):
            continue
        sent = sentences[si]
        low = sent.lower()
        s_off, o_off = low.find(s.lower()), low.find(o.lower())
        k0, k1 = _relation_span(sent, r, (s_off, s_off + len(s)), (o_off, o_off + len(o)))
        if CAUSAL_RELATION.search(r):
            passive = bool(re.search(r"\b(by|from|due to|because)\b", r, re.IGNORECASE))
            (cause, c_off), (effect, e_off) = ((o, o_off), (s, s_off)) if passive else ((s, s_off), (o, o_off))
            causal.append(CandidatePair(cause, effect, sent, passage, si, r.lower(), "openie", "openie",
                                        c_off, e_off, k0, k1))
        elif NON_CAUSAL_RELATION.search(r):
            other.append(CandidatePair(s, o, sent, passage, si, r.lower(), "openie", "none", s_off, o_off, k0, k1))
    return causal, other


@dataclass
class Candidates:
    """Every candidate of a corpus (``pairs``), the non-causal OpenIE pairs (``non_causal``) and the clause pairs
    of consecutive connective-free sentences (``adjacent``)."""

    pairs: list[CandidatePair]
    non_causal: list[CandidatePair]
    sentences: list[list[str]]
    adjacent: list[CandidatePair] = field(default_factory=list)

    def count(self) -> dict[str, int]:
        out: dict[str, int] = {"sentences": sum(len(s) for s in self.sentences), "non_causal": len(self.non_causal),
                               "adjacent": len(self.adjacent)}
        for p in self.pairs:
            out[p.strength] = out.get(p.strength, 0) + 1
        return out


def extract_candidates(corpus: Corpus, openie_triples: Sequence[Sequence[tuple[str, str, str]]] | None = None,
                       max_words: int = 14, min_words: int = 1) -> Candidates:
    """All candidates of a corpus, deduplicated per (passage, cause, effect), in corpus order.

    Args:
        corpus: P passages.
        openie_triples: optional per-passage triples (``OpenIERecords.triples``).
        max_words / min_words: span length bounds (words / content words, i.e. not function words).
    """
    pairs: list[CandidatePair] = []
    negatives: list[CandidatePair] = []
    adjacent: list[CandidatePair] = []
    all_sentences: list[list[str]] = []
    seen: set[tuple[int, str, str]] = set()
    for pos, passage in enumerate(corpus.passages):
        sentences = [_PAREN.sub("", s) for _, s in sentence_spans(passage.text)]
        all_sentences.append(sentences)
        found = connective_candidates(sentences, pos, max_words=max_words, min_words=min_words)
        neg: list[CandidatePair] = []
        if openie_triples is not None and pos < len(openie_triples):
            causal, neg = openie_candidates(sentences, openie_triples[pos], pos)
            found += causal
        for c in found:
            if c.key not in seen:
                seen.add(c.key)
                pairs.append(c)
        negatives.extend(neg)
        adjacent.extend(adjacent_pairs(sentences, pos, max_words=max_words, min_words=min_words))
    return Candidates(pairs, negatives, all_sentences, adjacent)


__all__ = ["CONNECTIVES", "CandidatePair", "Candidates", "adjacent_pairs", "connective_candidates", "extract_candidates",
           "normalize_span", "openie_candidates"]
