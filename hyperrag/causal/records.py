"""Per-passage causal records: what one passage contributes to the causal graph — the unit of incremental updates.

A :class:`PassageRecord` holds, for one passage, its candidate counts and its *accepted* pairs (scored, and
LLM-verified when an LLM is configured) with their raw cause/effect texts, sentence, connective, source,
strength, weight, scores and verdict — everything :func:`~hyperrag.causal.graph.assemble_causal_graph` needs,
and nothing that depends on the other passages or on the passage's position. A record is a function of

* the passage's content — id, title, text and, with ``use_openie``, its OpenIE triples (``fingerprint``);
* the settings, the pair classifier and the verifying LLM (the *family* of the causal index that stores it).

So a causal index can keep every record whose passage is unchanged and compute only the new and changed
passages (:func:`split_reusable` → :func:`compute_records`); deleted passages simply have no record any more.

    records, info = compute_records(passages, triples, settings, classifier, llm)   # candidates → scores → LLM
    reused, todo = split_reusable(passages, triples, settings, base_records)          # by fingerprint

LLM verification cap: ``verify_max_pairs`` bounds the pairs of one :func:`compute_records` call — the whole corpus
in a full build, only the new and changed passages in an incremental one. With an LLM, an incremental graph can
therefore hold verified pairs that a full rebuild would have left unverified (or the reverse); without an LLM
(or with a cap that is never reached) incremental and full builds are identical.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.causal.candidates import CandidatePair, extract_candidates
from hyperrag.causal.marking import mark_candidate
from hyperrag.data.types import Corpus, Passage
from hyperrag.llm.stages import stop_if_nothing_succeeded
from hyperrag.utils.atomic import atomic_write_jsonl
from hyperrag.utils.hashing import passage_digest, stable_digest

if TYPE_CHECKING:
    from hyperrag.causal.settings import CausalGraphSettings
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)

RECORDS_FILE = "causal_records.jsonl"
RECORDS_FORMAT = 2  # bump when what a record holds (or how it is computed) changes: old records are not reused
Triple = tuple[str, str, str]


@dataclass
class PassageRecord:
    """One passage's contribution (see the module docstring).

    Attributes:
        id: passage id.
        fingerprint: hash of the passage's content (id, title, text, OpenIE triples when used).
        counts: candidate counts (``sentences``, ``non_causal``, ``adjacent`` and one per strength).
        llm: ``verified`` / ``dropped`` / ``reoriented`` / ``failed`` pairs of this passage.
        pairs: accepted pairs in candidate order: ``cause``, ``effect`` (raw texts, oriented), ``sentence``,
            ``connective``, ``source``, ``strength``, ``weight``, ``statement`` (the LLM's rephrased causal
            statement, empty when unverified) and ``scores`` (``score``, ``reverse``, ``p_fwd``/``p_rev`` or
            ``rule``, and ``llm`` when verified).
    """

    id: str
    fingerprint: str
    counts: dict[str, int] = field(default_factory=dict)
    llm: dict[str, int] = field(default_factory=lambda: {"verified": 0, "dropped": 0, "reoriented": 0,
                                                          "failed": 0})
    pairs: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> PassageRecord:
        return cls(
            str(row["id"]), str(row["fingerprint"]), dict(row["counts"]), dict(row["llm"]), list(row["pairs"])
        )


def passage_fingerprint(passage: Passage, triples: Sequence[Sequence[str]] | None) -> str:
    """Hash of what a record depends on in the passage: id, title, text and its OpenIE triples (None: unused)."""
    return stable_digest(passage_digest(passage), None if triples is None else [list(t) for t in triples])


def _triples_of(
    triples: Sequence[Sequence[Triple]] | None, settings: CausalGraphSettings, pos: int
) -> Sequence[Triple] | None:
    if triples is None or not settings.use_openie:
        return None
    return triples[pos] if pos < len(triples) else []


def score_candidates(
    pairs: list[CandidatePair], classifier: Any, settings: CausalGraphSettings, batch_size: int = 64
) -> list[dict[str, Any]]:
    """Per candidate: ``{"score", "reverse", "p_fwd", "p_rev"}`` (classifier, reading the pair marked in both orders)
    or the rule prior."""
    if classifier is None:
        prior = {"strong": 1.0, "openie": settings.openie_prior, "weak": settings.weak_prior}
        return [{"score": prior.get(p.strength, 0.0), "reverse": False, "rule": p.strength} for p in pairs]
    if not pairs:
        return []
    fwd_texts, rev_texts, ok = [], [], []
    for i, p in enumerate(pairs):
        f, r = mark_candidate(p), mark_candidate(p, reverse=True)
        if f is not None and r is not None:
            fwd_texts.append(f)
            rev_texts.append(r)
            ok.append(i)
    probs = classifier.predict_proba(fwd_texts + rev_texts, batch_size=batch_size) if ok else torch.empty(0)
    out = [{"score": 0.0, "reverse": False, "p_fwd": None, "p_rev": None} for _ in pairs]
    for j, i in enumerate(ok):
        # 4 decimals: a probability then does not depend on which other texts shared its batch (padding changes
        # the last float bits), so an incremental update scores a pair exactly as a full rebuild does
        pf, pr = round(float(probs[j]), 4), round(float(probs[len(ok) + j]), 4)
        out[i] = {"score": max(pf, pr), "reverse": pr > pf, "p_fwd": pf, "p_rev": pr}
    return out


def verify_pairs(llm: LanguageModel, pairs: Sequence[CandidatePair], metadata: Mapping[str, str] | None = None
                 ) -> list[dict[str, Any] | None]:
    """``causal_pair_verification`` (Appendix A.2) of each pair — its cause and effect, the sentence it comes from
    and the contextual metadata (``domain``, ``dataset``, ``source_model``); None where the call failed.

    Raises:
        StageFailedError: every call failed (a dead endpoint, a model that cannot do the task): one line,
            instead of a causal index of unverified pairs labelled as verified by that LLM (the replies that
            worked are in the LLM response cache). The oracle's ``no_gold`` failures leave the pairs
            unverified, as designed.
    """
    if not pairs:
        return []
    meta = dict(metadata or {})
    inputs = [{"cause": p.cause, "effect": p.effect, "context": [p.sentence], **meta} for p in pairs]
    results = llm.complete_structured_batch("causal_pair_verification", inputs, progress="causal pairs")
    failed = [r for r in results if not r.ok]
    stop_if_nothing_succeeded("CDF-RAG causal pair verification", failed=len(failed),
                              succeeded=len(results) - len(failed),
                              first_error=f"{failed[0].error_kind}: {failed[0].error}" if failed else None,
                              llm=llm, unit="pairs")
    return [r.value if r.ok else None for r in results]


def compute_records(
    passages: Sequence[Passage],
    triples: Sequence[Sequence[Triple]] | None,
    settings: CausalGraphSettings,
    classifier: Any = None,
    llm: LanguageModel | None = None,
    metadata: Mapping[str, str] | None = None,
) -> tuple[list[PassageRecord], dict[str, int]]:
    """Candidates → scores → LLM verification for ``passages`` (``triples[j]`` belongs to ``passages[j]``).

    Args:
        metadata: the verification prompt's contextual metadata (``domain``, ``dataset``, ``source_model``).

    Returns:
        ``(records, info)``: one record per passage, in order, and ``info`` = ``{"candidates", "scored",
        "llm_asked", "llm_failed"}`` (pairs extracted, pairs scored, pairs sent to the LLM, calls that failed:
        those pairs stay in the graph unverified, with the classifier's weight).
    """
    s = settings
    passages = list(passages)
    sub_triples = None
    if triples is not None and s.use_openie:
        sub_triples = [list(_triples_of(triples, s, j) or []) for j in range(len(passages))]
    cands = extract_candidates(Corpus(passages), sub_triples, max_words=s.max_span_words)
    scores = score_candidates(cands.pairs, classifier, s)
    records = [
        PassageRecord(p.id, passage_fingerprint(p, _triples_of(triples, s, j)))
        for j, p in enumerate(passages)
    ]
    for j, sentences in enumerate(cands.sentences):
        records[j].counts = {"sentences": len(sentences), "non_causal": 0, "adjacent": 0}
    for c in cands.non_causal:
        records[c.passage].counts["non_causal"] += 1
    for c in cands.adjacent:
        records[c.passage].counts["adjacent"] += 1
    for c in cands.pairs:
        counts = records[c.passage].counts
        counts[c.strength] = counts.get(c.strength, 0) + 1

    accepted: list[tuple[str, str, CandidatePair, dict[str, Any]]] = []
    for p, sc in zip(cands.pairs, scores):
        if sc["score"] >= s.accept_threshold and sc["score"] > 0:
            cause, effect = (p.effect, p.cause) if sc["reverse"] else (p.cause, p.effect)
            accepted.append((cause, effect, p, dict(sc, weight=sc["score"])))
    asked = failed = 0
    drop: set[int] = set()
    if s.verify and getattr(llm, "available", False) and accepted:
        # every accepted pair (Appendix A.2), best first; verify_max_pairs caps one call (the whole corpus, or
        # only the new passages of an update). Replies are cached: an interrupted build resumes for free.
        order = sorted(range(len(accepted)), key=lambda i: -accepted[i][3]["score"])
        if s.verify_max_pairs is not None:
            order = order[: s.verify_max_pairs]
        as_pairs = [
            CandidatePair(c, e, p.sentence, p.passage, p.sentence_index, p.connective, p.source, p.strength)
            for c, e, p, _ in (accepted[i] for i in order)
        ]
        asked = len(as_pairs)
        for i, verdict in zip(order, verify_pairs(llm, as_pairs, metadata)):
            cause, effect, p, sc = accepted[i]
            counts = records[p.passage].llm
            if verdict is None:
                failed += 1
                counts["failed"] = counts.get("failed", 0) + 1
                continue
            counts["verified"] += 1
            sc["llm"] = verdict
            if not verdict["causal"]:
                if s.llm_drop_rejected:
                    drop.add(i)
                    counts["dropped"] += 1
                continue
            if verdict["direction"] == "b->a":
                cause, effect = effect, cause
                counts["reoriented"] += 1
            sc["weight"] = 0.5 * (sc["score"] + verdict["confidence"])
            sc["statement"] = verdict["statement"]
            accepted[i] = (cause, effect, p, sc)
    for i, (cause, effect, p, sc) in enumerate(accepted):
        if i in drop:
            continue
        records[p.passage].pairs.append(
            {
                "cause": cause,
                "effect": effect,
                "sentence": p.sentence,
                "connective": p.connective,
                "source": p.source,
                "strength": p.strength,
                "weight": float(sc["weight"]),
                "statement": sc.get("statement") or "",
                "scores": {k: v for k, v in sc.items() if k not in ("weight", "statement")},
            }
        )
    return records, {"candidates": len(cands.pairs), "scored": len(cands.pairs), "llm_asked": asked,
                     "llm_failed": failed}


def split_reusable(
    passages: Sequence[Passage],
    triples: Sequence[Sequence[Triple]] | None,
    settings: CausalGraphSettings,
    base: Mapping[str, PassageRecord] | None,
) -> tuple[dict[int, PassageRecord], list[int]]:
    """Which passages keep a record of ``base`` (keyed by fingerprint) and which must be computed.

    Returns:
        ``(reused, todo)``: ``{position: record}`` for unchanged passages, and the positions to compute.
    """
    reused: dict[int, PassageRecord] = {}
    todo: list[int] = []
    for pos, p in enumerate(passages):
        rec = base.get(passage_fingerprint(p, _triples_of(triples, settings, pos))) if base else None
        if rec is not None and rec.id == p.id:
            reused[pos] = rec
        else:
            todo.append(pos)
    return reused, todo


def save_records(directory: str | Path, records: Sequence[PassageRecord]) -> str:
    """Write the records (one JSON object per line, atomically) into ``directory``; return the file name."""
    atomic_write_jsonl(Path(directory) / RECORDS_FILE, (asdict(r) for r in records))
    return RECORDS_FILE


def load_records(directory: str | Path) -> dict[str, PassageRecord]:
    """``{fingerprint: record}`` of a causal index directory.

    Raises:
        ValueError: the file is missing or unreadable.
    """
    path = Path(directory) / RECORDS_FILE
    out: dict[str, PassageRecord] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    rec = PassageRecord.from_json(json.loads(line))
                    out[rec.fingerprint] = rec
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: unreadable causal records ({type(err).__name__})") from None
    return out


__all__ = [
    "RECORDS_FILE",
    "RECORDS_FORMAT",
    "PassageRecord",
    "compute_records",
    "load_records",
    "passage_fingerprint",
    "save_records",
    "score_candidates",
    "split_reusable",
    "verify_pairs",
]
