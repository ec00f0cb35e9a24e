"""The evaluation suite: every metric over the rows of a ``predictions.jsonl``, by name.

=======================  =================================================================  ==================
name                     reports (percent, mean over the queries it applies to)             needs
=======================  =================================================================  ==================
``retrieval``            ``recall@k``, ``fcr@k`` for each k                                  gold_ids
``context_recall``       ``context_recall`` — gold sentences (if given) or passages covered  gold
``context_recall_claims`` Ragas context recall: reference-answer statements the LLM judge     answers, LLM
                         attributes to the context (HugRAG's CR)
``context_recall_claims_lexical`` the same by content-word overlap (labelled fallback)     answers, corpus
``qa``                   ``em``, ``f1``, ``match_acc`` (answer in the response), ``jsr``      answers
                         (full chain in the context + answer in it)
``answer_overlap``       ``precision``, ``recall``: token overlap of the (short) answer with  answers
                         the gold answer F1 scores (CDF-RAG's Tables 3-5)
``judge_acc``            LLM-judged accuracy (HyperRAG's GPT-Acc), ``answer_judge`` task     answers, LLM
``accuracy``             ``accuracy`` — the answer names the correct option                  answers, options
``answer_relevancy``     Ragas-style, LLM-generated questions vs the question               answers, LLM
``answer_relevancy_emb`` cosine(question, answer) with the embedder                          answers
``groundedness``         LLM claim support; also ``hallucination_rate``: share of responses   answers, LLM
                         the LLM verifier flags (unsupported share of claims > ``hr_delta``)
``groundedness_lexical`` content-word support; also ``hallucination_rate_lexical`` (share    answers
                         of responses flagged by the lexical verifier)
``groundedness_span``    CDF-RAG §4.2: answer sentences traced by span alignment to one      answers, corpus
                         retrieved passage or causal triple (share ≥ ``span_threshold``)
``groundedness_emb``     CDF-RAG §4.3 / Table 3: sentence-embedding similarity of answer and  answers, encoder,
                         evidence — each answer sentence's best cosine with a retrieved item,  corpus
                         averaged over the sentences
``context_relevance``    CDF-RAG §3.3: mean SBERT cosine, question vs retrieved items         encoder, corpus
                         (top passages + retrieved causal triples)
``crc``                  CDF-RAG CRC: share of retrieved items on a causal path aligned with  causal reference
                         the question (``crc_reference``: gold — the gold supporting passages
                         and the causal pairs the fixed reference graph extracted from them;
                         graph — the paths a causal graph holds from the question); like for
                         like: the first ``crc_budget`` passages and triples of every method,
                         the passage share (``gold_passage_precision`` against gold: nothing
                         causal; ``crc_passages_causal`` against graph) and ``crc_pairs``
                         separately, ``crc`` pooled
``ccd``                  CDF-RAG CCD: mean hops of the retrieved causal paths (in hops)       causal paths
``srs``                  CDF-RAG SRS: cosine of the original and the refined queries          refinements
``causal_coverage``      gold causal pairs with both ends in the context                     causal_pairs
=======================  =================================================================  ==================

The *context* of a query is its top ``context_top_n`` retrieved passages (what the reader saw), or, when the method
recorded the evidence it actually answered from (``details["evidence"]``: HugRAG's kept subgraph), that evidence —
its passages first (at most ``context_top_n``), then its other items; the caps (``context_max_items``,
``context_max_tokens``: ``hydra_configs/eval_caps/``) are the same for every method (:func:`capped_evidence`).
Text-based metrics need the corpus to read passages. A failed or abstaining answer scores 0 in answer relevancy
(not left out); an empty context scores 0 in the claim recalls. ``metrics="auto"`` picks every metric whose needs
are met.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hyperrag.eval.causal import (
    causal_chain_depth,
    crc_by_kind,
    pair_text,
    retrieved_pairs,
    span_groundedness,
)
from hyperrag.eval.context import causal_coverage, context_recall, lexical_claim_recall, llm_claim_recall
from hyperrag.eval.groundedness import lexical_groundedness, llm_groundedness
from hyperrag.eval.judge import llm_judge_accuracy
from hyperrag.eval.qa import (
    answer_scores,
    option_correct,
    scored_answer,
    token_precision_recall,
)
from hyperrag.eval.relevancy import embedding_answer_relevancy, llm_answer_relevancy
from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k
from hyperrag.eval.text import is_abstention
from hyperrag.utils.sentences import split_sentences

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel

log = logging.getLogger(__name__)

GOLD_SENTENCE_FIELDS = ("gold_sentences", "gold_context")
CAUSAL_FIELDS = ("causal_pairs", "gold_causal_pairs")
LOWER_IS_BETTER = ("hallucination_rate", "hallucination_rate_lexical")


@dataclass
class EvalInputs:
    """What a metric may look at. ``rows`` are predictions rows, optionally joined with extra gold fields."""

    rows: list[dict[str, Any]]
    corpus: Any = None            # hyperrag.data.types.Corpus, for the context texts
    llm: LanguageModel | None = None  # an available LLM for the judge metrics
    encoder: Encoder | None = None  # the sentence embedder for relevancy
    ks: tuple[int, ...] = (2, 5, 10)
    context_top_n: int = 5
    answer_top_n: int | None = None  # the passages the run's reader read: JSR's cut-off, as metrics.json's (None:
    #                                  context_top_n)
    f1_answer: str = "short"      # which answer EM / F1 score (qa.f1_answer_of: HolisQA the full response)
    context_max_items: int | None = None  # evaluator cap: items of a recorded evidence list (passages: context_top_n)
    context_max_tokens: int | None = None  # evaluator cap: the context's length (words x 1.3), every method alike
    lexical_threshold: float = 0.8
    relevancy_questions: int = 3
    progress: bool = False
    hr_delta: float = 0.0         # a response is flagged as hallucinated when its unsupported share exceeds this
    span_threshold: float = 0.8   # span alignment at which an answer sentence counts as traced (groundedness_span)
    causal_reference: list[tuple[set[str], set[tuple[str, str]]] | None] | None = None  # per row, for CRC
    crc_reference: str = "gold"   # which reference causal_reference holds (evaluate.py crc_reference): names CRC's
    #                               passage share (CRC_PASSAGE_KEYS)
    crc_budget: int = 10          # CRC: ranked passages and retrieved triples scored per method (each kind)
    _texts: dict[str, str] = field(default_factory=dict, repr=False)

    def context_ids(self, row: dict[str, Any]) -> list[str]:
        return [str(i) for i in row.get("ranked_ids", [])[: self.context_top_n]]

    def passage_text(self, pid: str) -> str:
        if pid not in self._texts:
            self._texts[pid] = self.corpus[self.corpus.position(pid)].content
        return self._texts[pid]

    def context_pairs(self, row: dict[str, Any]) -> list[tuple[str, str]]:
        return [(pid, self.passage_text(pid)) for pid in self.context_ids(row) if pid in self.corpus]

    def context_text(self, row: dict[str, Any]) -> str | None:
        """The evaluated context under the caps, the same rule for every method (:func:`capped_evidence`): its
        recorded evidence (passages first, at most ``context_top_n``, then its other items), else its top
        ``context_top_n`` passages; at most ``context_max_items`` items and ``context_max_tokens`` tokens."""
        used = used_evidence(row)
        if used is not None:
            return capped_evidence(used, evidence_kinds(row), self.context_top_n, self.context_max_items,
                                   self.context_max_tokens)
        if self.corpus is None:
            return None
        return capped_context([t for _, t in self.context_pairs(row)], self.context_max_items, self.context_max_tokens)

    @property
    def has_answers(self) -> bool:
        return any("answer" in r for r in self.rows)

    @property
    def llm_available(self) -> bool:
        return bool(getattr(self.llm, "available", False))


def capped_context(items: list[str], max_items: int | None, max_tokens: int | None) -> str:
    """The evaluated context: the first ``max_items`` items, cut at ``max_tokens`` (words × 1.3) in all — the
    uniform cap HugRAG's evaluation puts on what every method passes to the judge (its Appendix F.4)."""
    items = items[:max_items] if max_items is not None else items
    text = "\n".join(items)
    if max_tokens is None:
        return text
    keep = int(max_tokens / 1.3)
    ends = [m.end() for m in re.finditer(r"\S+", text)]
    return text if len(ends) <= keep else text[: ends[keep - 1]] if keep else ""


def capped_evidence(items: list[str], kinds: list[str] | None, max_passages: int | None, max_items: int | None,
                    max_tokens: int | None) -> str:
    """A recorded evidence list under the evaluator caps, applied per method so that no method's passages are
    dropped first: its ``passage`` items first (at most ``max_passages``: the ``context_top_n`` every
    passage-ranking method is judged on), then its other items (HugRAG's S* rows) up to ``max_items`` in all, then
    the token cap over the whole. Without ``kinds`` (a run recorded before they were) the list is capped in its
    recorded order (:func:`capped_context`)."""
    if kinds is None or len(kinds) != len(items):
        return capped_context(items, max_items, max_tokens)
    passages = [t for t, k in zip(items, kinds) if k == "passage"][:max_passages]
    others = [t for t, k in zip(items, kinds) if k != "passage"]
    room = None if max_items is None else max(0, max_items - len(passages))
    return capped_context(passages[:max_items] + others[:room], None, max_tokens)


def evidence_kinds(row: dict[str, Any]) -> list[str] | None:
    """The kind of each recorded evidence item (``details["evidence_kinds"]``: ``passage`` or ``row``), if recorded."""
    details = row.get("details")
    if isinstance(details, dict) and isinstance(details.get("evidence_kinds"), list):
        return [str(k) for k in details["evidence_kinds"]]
    return None


def used_evidence(row: dict[str, Any]) -> list[str] | None:
    """The evidence texts the method says it answered from (``details["evidence"]``), if it recorded them."""
    details = row.get("details")
    if isinstance(details, dict) and isinstance(details.get("evidence"), list):
        return [str(t) for t in details["evidence"]]
    return None


def _field(row: dict[str, Any], names: Sequence[str]) -> Any:
    return next((row[n] for n in names if row.get(n)), None)


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return None if not vals else 100.0 * sum(vals) / len(vals)


Result = tuple[dict[str, float], list[dict[str, Any]]]


def m_retrieval(e: EvalInputs) -> Result:
    per = []
    for r in e.rows:
        g = r.get("gold_ids") or []
        per.append({f"{m}@{k}": (fn(r["ranked_ids"], g, k) if g else None)
                    for m, fn in (("recall", recall_at_k), ("fcr", full_chain_at_k)) for k in e.ks})
    keys = [f"recall@{k}" for k in e.ks] + [f"fcr@{k}" for k in e.ks]
    return {k: _mean([p[k] for p in per]) for k in keys}, per


def m_context_recall(e: EvalInputs) -> Result:
    per = []
    for r in e.rows:
        sents = _field(r, GOLD_SENTENCE_FIELDS)
        text = e.context_text(r) if sents else None
        per.append({"context_recall": context_recall(e.context_ids(r), r.get("gold_ids") or [], sents, text)})
    return {"context_recall": _mean([p["context_recall"] for p in per])}, per


def _reference(row: dict[str, Any]) -> str:
    answers = row.get("answers") or []
    return str(answers[0]) if answers else ""


def m_context_recall_claims(e: EvalInputs) -> Result:
    res = llm_claim_recall(e.llm, [r["question"] for r in e.rows], [_reference(r) for r in e.rows],
                           [e.context_text(r) or "" for r in e.rows], progress=e.progress)
    per = [{"context_recall_claims": None if x is None else x.get("score"),
            **({"context_recall_judge_error": x["judge_error"]} if x and "judge_error" in x else {})} for x in res]
    agg = {"context_recall_claims": _mean([p["context_recall_claims"] for p in per])}
    agg["context_recall_judge_failures"] = float(sum("context_recall_judge_error" in p for p in per))
    return agg, per


def m_context_recall_claims_lexical(e: EvalInputs) -> Result:
    scores = [lexical_claim_recall(_reference(r), e.context_text(r) or "", e.lexical_threshold) for r in e.rows]
    return {"context_recall_claims_lexical": _mean(scores)}, [{"context_recall_claims_lexical": s} for s in scores]


def m_qa(e: EvalInputs) -> Result:
    per = []
    for r in e.rows:
        unanswerable = not r.get("answers") or "answer" not in r
        per.append({"em": None, "f1": None, "match_acc": None, "jsr": None} if unanswerable
                   else answer_scores(r, e.answer_top_n or e.context_top_n, e.f1_answer))
    return {k: _mean([p[k] for p in per]) for k in ("em", "f1", "match_acc", "jsr")}, per


def m_answer_overlap(e: EvalInputs) -> Result:
    per = []
    for r in e.rows:
        golds, pred = r.get("answers") or [], r.get("answer") or ""
        if not golds or "answer" not in r:
            per.append({"precision": None, "recall": None})
            continue
        p, rec = token_precision_recall(scored_answer(pred, r.get("short_answer")), golds)
        per.append({"precision": p, "recall": rec})
    return {k: _mean([p[k] for p in per]) for k in ("precision", "recall")}, per


def m_judge_acc(e: EvalInputs) -> Result:
    res = llm_judge_accuracy(e.llm, [r["question"] for r in e.rows], _answers(e),
                             [r.get("answers") or [] for r in e.rows], progress=e.progress)
    return {"judge_acc": _mean(res)}, [{"judge_acc": x} for x in res]


def m_accuracy(e: EvalInputs) -> Result:
    """Multiple choice: rows with ``options`` and a known ``answer_index`` (rows without an answer count wrong)."""
    per = [{"accuracy": option_correct(r.get("answer") or "", r.get("options") or [], r.get("answer_index"))}
           for r in e.rows]
    return {"accuracy": _mean([p["accuracy"] for p in per])}, per


def _answers(e: EvalInputs) -> list[str | None]:
    return [r.get("answer") if r.get("answer_ok", True) else None for r in e.rows]


def m_answer_relevancy(e: EvalInputs) -> Result:
    res = llm_answer_relevancy(e.llm, e.encoder, [r["question"] for r in e.rows], _answers(e),
                               n_questions=e.relevancy_questions, progress=e.progress)
    per = [{"answer_relevancy": None if x is None else x.get("score"),
            "relevancy_questions": None if x is None else x.get("questions")} for x in res]
    agg = {"answer_relevancy": _mean([p["answer_relevancy"] for p in per]),
           "answer_relevancy_judge_failures": float(sum(bool(x and "judge_error" in x) for x in res))}
    return agg, per


def m_answer_relevancy_emb(e: EvalInputs) -> Result:
    res = embedding_answer_relevancy(e.encoder, [r["question"] for r in e.rows], _answers(e))
    return {"answer_relevancy_emb": _mean(res)}, [{"answer_relevancy_emb": s} for s in res]


def _flagged(scores: Sequence[float | None], delta: float) -> list[float | None]:
    """Per judged response: 1 when flagged as hallucinated (unsupported share ``1 − score`` above ``delta``)."""
    return [None if s is None else float(1.0 - s > delta) for s in scores]


def m_groundedness(e: EvalInputs) -> Result:
    res = llm_groundedness(e.llm, _answers(e), [e.context_pairs(r) for r in e.rows],
                           [r["question"] for r in e.rows], progress=e.progress)
    scores = [None if x is None else x["score"] for x in res]
    flags = _flagged(scores, e.hr_delta)
    per = [{"groundedness": s, "hallucinated": f, "claims": None if x is None else x["claims"]}
           for s, f, x in zip(scores, flags, res)]
    return {"groundedness": _mean(scores), "hallucination_rate": _mean(flags)}, per


def m_groundedness_lexical(e: EvalInputs) -> Result:
    scores = [None if is_abstention(a) else lexical_groundedness(a, e.context_text(r) or "", e.lexical_threshold)
              for r, a in zip(e.rows, _answers(e))]
    flags = _flagged(scores, e.hr_delta)
    return ({"groundedness_lexical": _mean(scores), "hallucination_rate_lexical": _mean(flags)},
            [{"groundedness_lexical": s, "hallucinated_lexical": f} for s, f in zip(scores, flags)])


def _evidence(e: EvalInputs, r: dict[str, Any]) -> list[str]:
    """The retrieved items of a row: its top passages' texts and the causal triples its method retrieved."""
    return [t for _, t in e.context_pairs(r)] + [pair_text(p) for p in retrieved_pairs(r)]


def m_groundedness_span(e: EvalInputs) -> Result:
    scores = [None if is_abstention(a) else span_groundedness(str(a), _evidence(e, r), e.span_threshold)
              for r, a in zip(e.rows, _answers(e))]
    return {"groundedness_span": _mean(scores)}, [{"groundedness_span": s} for s in scores]


def m_groundedness_emb(e: EvalInputs) -> Result:
    """CDF-RAG's Table 3 groundedness (§4.3: "the coherence between retrieved knowledge and generated responses,
    using sentence embedding similarity"): per answer, each sentence's highest cosine with one retrieved item
    (a top passage or a retrieved causal triple), averaged over the answer's sentences; abstentions and rows
    with no evidence are not scored."""
    import torch.nn.functional as F

    assert e.encoder is not None
    per: list[dict[str, Any]] = []
    for r, a in zip(e.rows, _answers(e)):
        items = _evidence(e, r)
        if is_abstention(a) or not items:
            per.append({"groundedness_emb": None})
            continue
        sentences = split_sentences(str(a)) or [str(a)]
        s_emb = F.normalize(e.encoder.encode(sentences, desc="answer sentences").float().cpu(), dim=-1)
        i_emb = F.normalize(e.encoder.encode(items, desc="retrieved items").float().cpu(), dim=-1)
        per.append({"groundedness_emb": float((s_emb @ i_emb.T).max(dim=1).values.mean())})
    return {"groundedness_emb": _mean([p["groundedness_emb"] for p in per])}, per


def m_context_relevance(e: EvalInputs) -> Result:
    assert e.encoder is not None
    items = [_evidence(e, r) for r in e.rows]
    flat = [t for its in items for t in its]
    q_emb = e.encoder.encode([r["question"] for r in e.rows], desc="questions").float().cpu()
    i_emb = e.encoder.encode(flat, desc="retrieved items").float().cpu() if flat else None
    per, start = [], 0
    for b, its in enumerate(items):
        if not its or i_emb is None:
            per.append({"context_relevance": None})
            continue
        per.append({"context_relevance": float((i_emb[start:start + len(its)] @ q_emb[b]).mean())})
        start += len(its)
    return {"context_relevance": _mean([p["context_relevance"] for p in per])}, per


#: the name of CRC's passage share per reference: against ``gold`` it is the share of the first ``crc_budget``
#: passages that are gold supporting passages — **gold-passage precision**, nothing causal; against ``graph`` it is
#: the share that hold an edge of a causal path the graph has from the question — the causal form
CRC_PASSAGE_KEYS = {"gold": "gold_passage_precision", "graph": "crc_passages_causal"}


def m_crc(e: EvalInputs) -> Result:
    """CRC like for like: every method's first ``crc_budget`` ranked passages and first ``crc_budget`` retrieved
    triples against the same reference; the passage share (named by the reference, :data:`CRC_PASSAGE_KEYS`) and
    ``crc_pairs`` separately, ``crc`` pooled (the paper's count, which mixes the kinds)."""
    assert e.causal_reference is not None
    key = CRC_PASSAGE_KEYS[e.crc_reference]
    empty = {"crc": None, key: None, "crc_pairs": None}
    per = []
    for r, ref in zip(e.rows, e.causal_reference):
        if ref is None:
            per.append(dict(empty))
            continue
        got = crc_by_kind([str(i) for i in r.get("ranked_ids", [])], retrieved_pairs(r), ref[0], ref[1], e.crc_budget)
        per.append({"crc": got["crc"], key: got["crc_passages"], "crc_pairs": got["crc_pairs"]})
    return {k: _mean([p[k] for p in per]) for k in empty}, per


def _details(r: dict[str, Any]) -> dict[str, Any]:
    return r["details"] if isinstance(r.get("details"), dict) else {}


def m_ccd(e: EvalInputs) -> Result:
    """Mean hops of a query's retrieved causal paths, averaged over the queries with paths (hops, not percent)."""
    per = [{"ccd": causal_chain_depth(list(_details(r).get("causal_path_depths") or []))} for r in e.rows]
    vals = [p["ccd"] for p in per if p["ccd"] is not None]
    return {"ccd": sum(vals) / len(vals) if vals else None}, per


def m_srs(e: EvalInputs) -> Result:
    per = [{"srs": _details(r).get("refinement_similarity")} for r in e.rows]
    return {"srs": _mean([p["srs"] for p in per])}, per


def m_causal_coverage(e: EvalInputs) -> Result:
    per = []
    for r in e.rows:
        pairs = _field(r, CAUSAL_FIELDS)
        text = e.context_text(r) if pairs else None
        per.append({"causal_coverage": causal_coverage(pairs or [], e.context_ids(r), text)})
    return {"causal_coverage": _mean([p["causal_coverage"] for p in per])}, per


@dataclass(frozen=True)
class Metric:
    fn: Callable[[EvalInputs], Result]
    needs: frozenset[str] = frozenset()


METRICS: dict[str, Metric] = {
    "retrieval": Metric(m_retrieval),
    "context_recall": Metric(m_context_recall),
    "context_recall_claims": Metric(m_context_recall_claims, frozenset({"answers", "llm"})),
    "context_recall_claims_lexical": Metric(m_context_recall_claims_lexical, frozenset({"answers", "corpus"})),
    "qa": Metric(m_qa, frozenset({"answers"})),
    "answer_overlap": Metric(m_answer_overlap, frozenset({"answers"})),
    "judge_acc": Metric(m_judge_acc, frozenset({"answers", "llm"})),
    "accuracy": Metric(m_accuracy, frozenset({"answers", "options"})),
    "answer_relevancy": Metric(m_answer_relevancy, frozenset({"answers", "llm", "encoder"})),
    "answer_relevancy_emb": Metric(m_answer_relevancy_emb, frozenset({"answers", "encoder"})),
    "groundedness": Metric(m_groundedness, frozenset({"answers", "llm", "corpus"})),
    "groundedness_lexical": Metric(m_groundedness_lexical, frozenset({"answers", "corpus"})),
    "groundedness_span": Metric(m_groundedness_span, frozenset({"answers", "corpus"})),
    "groundedness_emb": Metric(m_groundedness_emb, frozenset({"answers", "encoder", "corpus"})),
    "context_relevance": Metric(m_context_relevance, frozenset({"encoder", "corpus"})),
    "crc": Metric(m_crc, frozenset({"causal_graph"})),
    "ccd": Metric(m_ccd, frozenset({"causal_paths"})),
    "srs": Metric(m_srs, frozenset({"refinements"})),
    "causal_coverage": Metric(m_causal_coverage, frozenset({"causal"})),
}


def missing_needs(name: str, e: EvalInputs) -> list[str]:
    have = {"answers": e.has_answers, "llm": e.llm_available, "encoder": e.encoder is not None,
            "corpus": e.corpus is not None, "causal": any(_field(r, CAUSAL_FIELDS) for r in e.rows),
            "options": any(r.get("options") for r in e.rows), "causal_graph": e.causal_reference is not None,
            "causal_paths": any("causal_path_depths" in _details(r) for r in e.rows),
            "refinements": any(_details(r).get("refinement_similarity") is not None for r in e.rows)}
    return [n for n in sorted(METRICS[name].needs) if not have[n]]


def select_metrics(requested: str | Sequence[str], e: EvalInputs) -> list[str]:
    """``"auto"`` → every metric whose needs are met; otherwise the named ones (unknown names raise)."""
    if isinstance(requested, str) and requested != "auto":
        requested = [m.strip() for m in requested.split(",") if m.strip()]
    if requested == "auto":
        return [n for n in METRICS if not missing_needs(n, e)]
    unknown = [m for m in requested if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; known: {list(METRICS)}")
    return list(requested)


def evaluate_rows(e: EvalInputs, metrics: str | Sequence[str] = "auto") -> tuple[dict[str, float], list[dict[str, Any]], dict[str, str]]:
    """Run the selected metrics. Returns ``(aggregate, per_query, skipped)``: aggregate metrics in percent
    (metrics with no applicable query are left out), one dict per row (``id`` + per-query values) and, per
    skipped metric, why."""
    aggregate: dict[str, float] = {}
    per_query: list[dict[str, Any]] = [{"id": r.get("id")} for r in e.rows]
    skipped: dict[str, str] = {}
    for name in select_metrics(metrics, e):
        missing = missing_needs(name, e)
        if missing:
            skipped[name] = "needs " + ", ".join(missing)
            log.warning("metric %s skipped: %s", name, skipped[name])
            continue
        agg, per = METRICS[name].fn(e)
        aggregate.update({k: round(v, 4) for k, v in agg.items() if v is not None})
        for row, extra in zip(per_query, per):
            row.update(extra)
    return aggregate, per_query, skipped
