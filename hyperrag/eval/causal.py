"""CDF-RAG metrics: causal retrieval coverage, context relevance, groundedness, hallucination rate, causal
chain depth, semantic refinement score, causal consistency, and answer F1 (:func:`hyperrag.eval.qa.token_f1`).

Definitions (per query; :func:`summarize_causal_predictions` averages them over a prediction file):

* **causal retrieval coverage** — of the causal edges whose provenance passage is a gold passage, the share
  that appear on the retrieved causal paths (undefined, None, when the gold passages hold no causal edge);
* **context relevance** — mean cosine between the question and the context items shown to the generator
  (unit-norm embeddings), and, with gold passages, **context precision**: share of the top-n passages that are gold;
* **groundedness** — share of the answer's claims the evidence supports (claim-support verdicts), or without
  an LLM, **lexical groundedness**: share of the answer's content tokens found in the context;
* **hallucination rate** — ``1 − supported / total`` claims (0 when the answer has no claim);
* **causal chain depth** — edges of the longest retrieved causal path;
* **semantic refinement score** — mean cosine between the original question and its rewrites (1 without any);
* **causal consistency** — see :func:`causal_consistency`.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from hyperrag.eval.qa import normalize_answer, token_f1
from hyperrag.eval.text import content_tokens


def span_similarity(a: str, b: str) -> float:
    """Token F1 of the content tokens of two phrases (0 when either has none)."""
    ta, tb = content_tokens(a), content_tokens(b)
    if not ta or not tb:
        return 0.0
    common = sum(min(ta.count(t), tb.count(t)) for t in set(ta))
    if common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


# ---- retrieval-side ------------------------------------------------------------------------------------
def gold_causal_edges(edge_passages: Sequence[str], gold_ids: Iterable[str]) -> set[int]:
    """Ids of the causal edges whose provenance passage id is gold."""
    gold = set(gold_ids)
    return {e for e, pid in enumerate(edge_passages) if pid in gold}


def causal_retrieval_coverage(retrieved_edges: Iterable[int], gold_edges: Iterable[int]) -> float | None:
    """Share of the gold causal edges among the retrieved ones; None when there is no gold causal edge."""
    gold = set(gold_edges)
    if not gold:
        return None
    return len(gold & set(retrieved_edges)) / len(gold)


def context_relevance(query_emb: torch.Tensor, context_emb: torch.Tensor) -> float:
    """Mean cosine between a unit query vector [D] and unit context vectors [n, D] (0 for an empty context)."""
    if context_emb.numel() == 0:
        return 0.0
    return float((context_emb.float() @ query_emb.float()).mean())


def context_precision(ranked_ids: Sequence[str], gold_ids: Iterable[str], n: int) -> float:
    """Share of the top ``n`` passages that are gold."""
    top = list(ranked_ids[:n])
    if not top:
        return 0.0
    gold = set(gold_ids)
    return sum(p in gold for p in top) / len(top)


def causal_chain_depth(path_depths: Iterable[int]) -> int:
    """Edges of the longest path (0 without paths)."""
    return max(path_depths, default=0)


def semantic_refinement_score(original: torch.Tensor, rewrites: torch.Tensor) -> float:
    """Mean cosine between the original question's unit embedding [D] and its rewrites' [R, D]; 1.0 when R = 0
    (no rewrite = no drift)."""
    if rewrites.numel() == 0:
        return 1.0
    return float((rewrites.float() @ original.float()).mean())


# ---- generation-side -----------------------------------------------------------------------------------
def hallucination_rate(verdicts: Sequence[str]) -> float:
    """``1 − supported/total`` over claim-support verdicts; 0.0 when there is no claim."""
    if not verdicts:
        return 0.0
    return 1.0 - sum(v == "supported" for v in verdicts) / len(verdicts)


def groundedness(verdicts: Sequence[str]) -> float | None:
    """``supported/total`` over claim-support verdicts; None when there is no claim."""
    if not verdicts:
        return None
    return sum(v == "supported" for v in verdicts) / len(verdicts)


def lexical_groundedness(answer: str, contexts: Sequence[str]) -> float | None:
    """Share of the answer's content tokens that occur in the context (LLM-free groundedness); None for an
    answer without content tokens."""
    tokens = content_tokens(answer)
    if not tokens:
        return None
    vocab = {t for c in contexts for t in normalize_answer(c).split()}
    return sum(t in vocab for t in tokens) / len(tokens)


def answer_f1(prediction: str, golds: Sequence[str]) -> float:
    return token_f1(prediction, golds)


def causal_consistency(pairs: Sequence[tuple[str, str]], stated: Sequence[tuple[str, str]], question: str = "",
                       answer: str = "", threshold: float = 0.5, max_pairs: int = 8) -> dict[str, Any]:
    """How far a generated response agrees with the retrieved causal pairs.

    1. *Answer-relevant pairs* ``R``: the retrieved pairs ``(cause, effect)`` sharing a content token with the
       question or the answer; when none does, all retrieved pairs (the retriever found them for this query);
       at most ``max_pairs``, in retrieval order.
    2. A pair *agrees* with the response when some stated link ``(c', e')`` matches it in the same direction —
       ``span_similarity(cause, c') >= threshold`` and ``span_similarity(effect, e') >= threshold`` — and is
       *contradicted* when a stated link matches it reversed (and none in the same direction).
    3. ``score = |agreeing pairs| / |R|``; a relevant pair the response omits counts against it, a contradicted
       one too. With no retrieved pair at all the score is 1.0 (nothing to be inconsistent with) and
       ``checked`` is False.

    Returns:
        ``{"score", "relevant", "agree", "contradicted", "omitted", "checked"}`` (pair lists as [cause, effect]).
    """
    if not pairs:
        return {"score": 1.0, "relevant": [], "agree": [], "contradicted": [], "omitted": [], "checked": False}
    anchor = set(content_tokens(f"{question} {answer}"))
    relevant = [p for p in pairs if anchor & set(content_tokens(f"{p[0]} {p[1]}"))] or list(pairs)
    relevant = list(dict.fromkeys(relevant))[:max_pairs]
    agree, contra, omitted = [], [], []
    for c, e in relevant:
        fwd = any(span_similarity(c, sc) >= threshold and span_similarity(e, se) >= threshold for sc, se in stated)
        rev = any(span_similarity(c, se) >= threshold and span_similarity(e, sc) >= threshold for sc, se in stated)
        (agree if fwd else contra if rev else omitted).append([c, e])
    return {"score": len(agree) / len(relevant), "relevant": [list(p) for p in relevant], "agree": agree,
            "contradicted": contra, "omitted": omitted, "checked": True}


# ---- aggregation ---------------------------------------------------------------------------------------
def _mean(values: Iterable[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return round(100.0 * statistics.fmean(vals), 2) if vals else None


def summarize_causal_predictions(rows: Sequence[Mapping[str, Any]], edge_passages: Sequence[str] | None = None,
                                 top_n: int = 5) -> dict[str, Any]:
    """Means (in percent, except depth) of the CDF-RAG metrics over prediction rows (``predictions.jsonl``).

    Args:
        rows: prediction records with ``ranked_ids``, ``gold_ids``, ``answers`` and CDF-RAG ``details``
            (``causal_edge_ids``, ``causal_depth``, ``refinement_similarity``, ``generation``).
        edge_passages: the causal graph's per-edge provenance passage ids (for causal retrieval coverage).
        top_n: context size for context precision.
    """
    coverage, precision, depth, refine, hall, grounded, consistency, f1 = [], [], [], [], [], [], [], []
    for r in rows:
        d = r.get("details") or {}
        depth.append(d.get("causal_depth", 0))
        refine.append(d.get("refinement_similarity"))
        if r.get("gold_ids"):
            precision.append(context_precision(r["ranked_ids"], r["gold_ids"], top_n))
            if edge_passages is not None and "causal_edge_ids" in d:
                coverage.append(causal_retrieval_coverage(d["causal_edge_ids"],
                                                          gold_causal_edges(edge_passages, r["gold_ids"])))
        gen = d.get("generation")
        if gen:
            hall.append(gen.get("hallucination"))
            grounded.append(None if gen.get("hallucination") is None else 1.0 - gen["hallucination"])
            consistency.append(gen.get("consistency_final"))
            if r.get("answers"):
                f1.append(token_f1(gen.get("answer", ""), r["answers"]))
    out: dict[str, Any] = {
        "context_precision": _mean(precision),
        "causal_chain_depth": round(statistics.fmean(depth), 3) if depth else None,
        "semantic_refinement_score": _mean(refine),
        "hallucination_rate": _mean(hall), "groundedness": _mean(grounded), "causal_consistency": _mean(consistency),
        "answer_f1": _mean(f1), "queries": len(rows),
    }
    cov = [c for c in coverage if c is not None]
    if cov:
        out["causal_retrieval_coverage"] = _mean(cov)
    return out


def summarize_run(run_dir: str | Path, top_n: int = 5) -> dict[str, Any]:
    """:func:`summarize_causal_predictions` of a ``retrieve.py method=cdfrag`` run directory (its
    ``predictions.jsonl``; the causal graph's provenance from the index named in ``metrics.json``)."""
    run = Path(run_dir)
    rows = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines() if line.strip()]
    edge_passages = None
    meta = json.loads((run / "metrics.json").read_text()) if (run / "metrics.json").is_file() else {}
    index_dir = meta.get("causal_index_dir")
    if index_dir and (Path(index_dir) / "causal_graph.json").is_file():
        info = json.loads((Path(index_dir) / "causal_graph.json").read_text())["edge_info"]
        edge_passages = [e["passage_id"] for e in info]
    return summarize_causal_predictions(rows, edge_passages, top_n=top_n)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m hyperrag.eval.causal <run_dir> [top_n]``: print the CDF-RAG metrics of a run as JSON."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit("usage: python -m hyperrag.eval.causal <run_dir> [top_n]")
    print(json.dumps(summarize_run(args[0], int(args[1]) if len(args) > 1 else 5), indent=1))


__all__ = ["answer_f1", "causal_chain_depth", "causal_consistency", "causal_retrieval_coverage", "content_tokens",
           "context_precision", "context_relevance", "gold_causal_edges", "groundedness", "hallucination_rate",
           "lexical_groundedness", "semantic_refinement_score", "span_similarity", "summarize_causal_predictions",
           "summarize_run"]


if __name__ == "__main__":
    main()
