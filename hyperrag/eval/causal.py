"""CDF-RAG's metrics (§3.3, §4.2–4.3, Tables 2–3), per query; :mod:`hyperrag.eval.suite` averages them over a
prediction file (``python evaluate.py``), for CDF-RAG and — where they apply — for every other method.

* **Context Relevance** — mean Sentence-BERT cosine between the question and the retrieved items (the top passages,
  and the causal triples when the method retrieved some): :func:`context_relevance`;
* **Causal Retrieval Coverage (CRC)** — share of the retrieved items (passages and causal triples) that belong to a
  causal path aligned with the question, against one reference per dataset that no run makes
  (:mod:`hyperrag.causal.reference`: the gold passages and the pairs a fixed reference graph extracted from them);
  like for like, :func:`crc_by_kind`: the same item budget for every method, passages and triples apart
  (:func:`causal_retrieval_coverage`: the paper's pooled count);
* **Groundedness** — span-level alignment: each answer sentence is traced to its best-aligned span in one retrieved
  passage or triple (:func:`span_alignment`); the share traced at least ``threshold``: :func:`span_groundedness`;
* **Hallucination rate (HR)** — the share of responses the LLM verifier flags as hallucinated
  (:func:`hallucination_score` > δ per response; the suite does the share);
* **Causal Chain Depth (CCD)** — mean number of directed hops of the retrieved causal paths:
  :func:`causal_chain_depth`;
* **Semantic Refinement Score (SRS)** — cosine between the original and the refined queries:
  :func:`semantic_refinement_score` (undefined without a refinement).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from hyperrag.eval.qa import normalize_answer
from hyperrag.utils.sentences import split_sentences


# ---- refinement and retrieval ----------------------------------------------------------------------------
def semantic_refinement_score(original: torch.Tensor, rewrites: torch.Tensor) -> float | None:
    """SRS: mean cosine between the original question's unit embedding [D] and its rewrites' [R, D]; None when
    R = 0 (nothing was refined)."""
    if rewrites.numel() == 0:
        return None
    return float((rewrites.float() @ original.float()).mean())


def context_relevance(query_emb: torch.Tensor, item_emb: torch.Tensor) -> float | None:
    """Context Relevance: mean cosine between a unit query vector [D] and unit item vectors [n, D] (None for no
    item)."""
    if item_emb.numel() == 0:
        return None
    return float((item_emb.float() @ query_emb.float()).mean())


def pair_key(cause: str, effect: str) -> tuple[str, str]:
    return normalize_answer(cause), normalize_answer(effect)


def causal_retrieval_coverage(passage_ids: Sequence[str], pairs: Iterable[Sequence[str]],
                              reference_passages: set[str], reference_pairs: set[tuple[str, str]]) -> float | None:
    """CRC, pooled as the paper counts it: the share of retrieved items in the reference — a passage when it is one
    of ``reference_passages`` (against ``crc_reference=gold`` these are the gold supporting passages, so the passage
    part is gold-passage precision; against ``graph`` the passages holding an edge of a causal path from the
    question), a ``(cause, effect)`` triple when it is one of the reference pairs. None for no
    retrieved item. Pooling mixes kinds (a method with triples has more items than one without): across methods
    compare :func:`crc_by_kind`'s separate shares."""
    pairs = [pair_key(p[0], p[1]) for p in pairs]
    items = len(passage_ids) + len(pairs)
    if not items:
        return None
    hits = sum(p in reference_passages for p in passage_ids) + sum(p in reference_pairs for p in pairs)
    return hits / items


def crc_by_kind(passage_ids: Sequence[str], pairs: Sequence[Sequence[str]], reference_passages: set[str],
                reference_pairs: set[tuple[str, str]], budget: int) -> dict[str, float | None]:
    """CRC like for like: the same item budget for every method, each kind of item on its own.

    Args:
        passage_ids: the method's ranked passages; the first ``budget`` count.
        pairs: the method's retrieved ``(cause, effect, ...)`` triples in its order; the first ``budget`` count.
        reference_passages / reference_pairs: the question's reference items (the fixed reference graph's).
        budget: items of each kind scored, the same for every method.

    Returns:
        ``{"crc": pooled share over those items, "crc_passages": share of the passages on the reference,
        "crc_pairs": share of the triples (None for a method that retrieved none)}``.
    """
    passages, kept = list(passage_ids)[:budget], [pair_key(p[0], p[1]) for p in list(pairs)[:budget]]
    on_passages = sum(p in reference_passages for p in passages)
    on_pairs = sum(p in reference_pairs for p in kept)
    items = len(passages) + len(kept)
    return {"crc": (on_passages + on_pairs) / items if items else None,
            "crc_passages": on_passages / len(passages) if passages else None,
            "crc_pairs": on_pairs / len(kept) if kept else None}


REFERENCE_GRAPH_DIR = "crc_reference"  # <cache_dir>/crc_reference/<dataset>/: CRC's fixed reference graph
REFERENCE_LABEL_FILE = "crc_reference.json"  # beside its causal_graph.json: how it was built (classifier, verifier)


def reference_graph_dir(cache_dir: str | Path, dataset_name: str) -> Path:
    """Where ``python -m hyperrag.causal reference`` stores a dataset's fixed CRC reference graph (one per dataset,
    shared by every method's CRC)."""
    return Path(cache_dir) / REFERENCE_GRAPH_DIR / dataset_name


def causal_chain_depth(path_depths: Sequence[int]) -> float | None:
    """CCD: mean directed hops of the retrieved causal paths; None without paths."""
    return sum(path_depths) / len(path_depths) if path_depths else None


# ---- generation ------------------------------------------------------------------------------------------
def hallucination_score(verdicts: Sequence[str]) -> float:
    """S_hallucination = 1 − |K ∩ Y| / |Y| over the answer's claims Y (claim-support verdicts); 0 with no claim."""
    if not verdicts:
        return 0.0
    return 1.0 - sum(v == "supported" for v in verdicts) / len(verdicts)


def span_alignment(claim: str, evidence: str) -> float:
    """How well ``claim`` aligns with its best-matching span of ``evidence`` (0–1): rapidfuzz's partial ratio of
    the normalised texts (the best window of the evidence as long as the claim); an evidence item shorter than the
    claim can cover only its share of it."""
    from rapidfuzz import fuzz

    a, b = normalize_answer(claim), normalize_answer(evidence)
    if not a or not b:
        return 0.0
    score = fuzz.partial_ratio(a, b) / 100.0
    return score * min(1.0, len(b) / len(a))


def span_groundedness(answer: str, evidence: Sequence[str], threshold: float = 0.8) -> float | None:
    """Groundedness: the share of the answer's sentences whose best span alignment with one retrieved item is at
    least ``threshold``; None for an answer without content."""
    claims = [s for s in split_sentences(answer) if normalize_answer(s)] or ([answer] if normalize_answer(answer)
                                                                              else [])
    if not claims:
        return None
    return sum(max((span_alignment(c, e) for e in evidence), default=0.0) >= threshold for c in claims) / len(claims)


def retrieved_pairs(row: dict[str, Any]) -> list[list[str]]:
    """The causal triples a prediction row's method retrieved (CDF-RAG's ``details.causal_pairs``; [] for others)."""
    details = row.get("details") if isinstance(row.get("details"), dict) else {}
    return [list(p) for p in (details.get("causal_pairs") or []) if isinstance(p, (list, tuple)) and len(p) >= 2]


def pair_text(pair: Sequence[str]) -> str:
    """A retrieved triple as text: its rephrased statement when it has one, else ``cause causes effect``."""
    return pair[3] if len(pair) > 3 and pair[3] else f"{pair[0]} causes {pair[1]}"


__all__ = ["REFERENCE_GRAPH_DIR", "REFERENCE_LABEL_FILE", "causal_chain_depth", "causal_retrieval_coverage", "context_relevance",
           "crc_by_kind", "hallucination_score", "pair_key", "pair_text", "reference_graph_dir", "retrieved_pairs",
           "semantic_refinement_score", "span_alignment", "span_groundedness"]
