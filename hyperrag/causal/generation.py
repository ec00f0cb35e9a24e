"""CDF-RAG's knowledge rewriting and generation loop with causal and hallucination feedback.

For each question, given the retrieved passages and the causal pairs on the retrieved paths:

  1. **rewrite** — the LLM condenses passages and causal pairs into a compact causal context: a summary and a
     list of cause → effect links (:class:`~hyperrag.causal.tasks.CausalContextRewrite`); a failed call falls
     back to the verbatim pairs;
  2. **answer** — ``grounded_answer`` over the causal context (key ``causal_context``) and the passages;
  3. **causal consistency** — :func:`~hyperrag.eval.causal.causal_consistency` of the context's links against
     the retrieved pairs; **below τ the answer is regenerated under strict grounding** (``strict_rewrite`` over
     the passages and the verbatim pairs, keys ``pair:<i>``, with the disagreeing links as unsupported claims);
     the links the regenerated answer then rests on are the verbatim pairs it cites, and consistency is
     measured again;
  4. **hallucination check** — ``claim_extraction`` on the answer, ``claim_support`` of each claim against the
     evidence (passages + verbatim pairs; never the model's own summary), ``hallucination = 1 − supported /
     total``; **above δ the answer is rewritten** (``strict_rewrite`` with the unsupported claims) and checked
     again, at most ``max_rounds`` rewrites.

Every step is appended to the record's ``steps`` (task, inputs that matter, outcome), so a prediction file
shows which branches ran. Calls are batched per step over the questions that need it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperrag.causal.tasks import CausalContextRewrite
from hyperrag.config.validation import NonNegativeInt, PositiveInt, Probability, settings
from hyperrag.eval.causal import causal_consistency, hallucination_rate

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)

Passage = tuple[str, str]  # (passage id, text)
Pair = tuple[str, str, str]  # (cause, effect, provenance passage id)


def pair_statement(cause: str, effect: str) -> str:
    return f"{cause} causes {effect}."


def context_text(summary: str, links: Sequence[tuple[str, str]]) -> str:
    lines = [summary.strip()] if summary.strip() else []
    if links:
        lines.append("Causal links:")
        lines.extend(f"- {c} → {e}" for c, e in links)
    return "\n".join(lines) or "(no causal context)"


@settings
class GenerationSettings:
    """CDF-RAG's ``generation``.

    Attributes:
        enabled: generate at all (needs an LLM).
        tau: causal-consistency threshold; below it the answer is regenerated under strict grounding.
        delta: hallucination threshold; above it the answer is rewritten.
        max_rounds: rewrites after the hallucination check, at most.
        top_n: passages shown to the LLM.
        max_pairs: causal pairs shown / checked.
        match_threshold: span similarity for a stated link to match a retrieved pair (see ``causal_consistency``).
        rewrite_context: run step 1 (else the verbatim pairs are the context).
    """

    enabled: bool
    tau: Probability
    delta: Probability
    max_rounds: NonNegativeInt
    top_n: PositiveInt
    max_pairs: NonNegativeInt
    match_threshold: Probability
    rewrite_context: bool


class CausalGenerator:
    """Args:
        llm: an available LLM.
        settings: thresholds, rounds and evidence sizes (:class:`GenerationSettings`; ``enabled`` is the
            caller's switch).
    """

    def __init__(self, llm: LanguageModel, settings: GenerationSettings) -> None:
        self.llm = llm
        s = settings
        self.tau, self.delta, self.max_rounds = s.tau, s.delta, s.max_rounds
        self.top_n, self.max_pairs = s.top_n, s.max_pairs
        self.match_threshold = s.match_threshold
        self.rewrite_context = s.rewrite_context
        self.rewrite_task = CausalContextRewrite()

    def run(self, question: str, passages: Sequence[Passage], pairs: Sequence[Pair]) -> dict[str, Any]:
        return self.run_batch([question], [passages], [pairs])[0]

    def run_batch(self, questions: Sequence[str], passages: Sequence[Sequence[Passage]],
                  pairs: Sequence[Sequence[Pair]]) -> list[dict[str, Any]]:
        """One record per question: ``answer``, ``supporting``, ``context``, consistency and hallucination before
        and after the feedback, ``fallback_taken``, ``rewrites`` and the ``steps`` log."""
        recs: list[dict[str, Any]] = []
        for q, ps, prs in zip(questions, passages, pairs):
            prs = list(dict.fromkeys((c, e, pid) for c, e, pid in prs))[: self.max_pairs]
            evidence = [(pid, text) for pid, text in ps[: self.top_n]]
            evidence += [(f"pair:{i}", f"{pair_statement(c, e)} (source passage {pid})") for i, (c, e, pid) in
                         enumerate(prs)]
            recs.append({"question": q, "passages": list(ps[: self.top_n]), "pairs": prs, "evidence": evidence,
                         "steps": [], "answer": "", "supporting": [], "fallback_taken": False, "rewrites": 0,
                         "summary": "", "links": []})
        self._rewrite(recs)
        self._answer(recs)
        self._consistency(recs)
        self._hallucination(recs)
        return [self._public(r) for r in recs]

    # ---- steps -----------------------------------------------------------------------------------------
    def _rewrite(self, recs: list[dict[str, Any]]) -> None:
        for r in recs:
            r["links"] = [(c, e) for c, e, _ in r["pairs"]]
        if not self.rewrite_context:
            return
        inputs = [{"question": r["question"], "passages": r["passages"],
                   "causal_pairs": [(c, e) for c, e, _ in r["pairs"]]} for r in recs]
        for r, res in zip(recs, self.llm.complete_structured_batch(self.rewrite_task, inputs)):
            if res.ok:
                r["summary"], r["links"] = res.value["summary"], [tuple(x) for x in res.value["links"]]
            r["steps"].append({"step": "rewrite_context", "ok": res.ok, "summary": r["summary"],
                               "links": [list(x) for x in r["links"]],
                               **({} if res.ok else {"error": str(res.error_kind), "fallback": "verbatim pairs"})})

    def _answer(self, recs: list[dict[str, Any]]) -> None:
        inputs = [{"question": r["question"],
                   "passages": [("causal_context", context_text(r["summary"], r["links"]))] + r["passages"]}
                  for r in recs]
        for r, res in zip(recs, self.llm.complete_structured_batch("grounded_answer", inputs)):
            if res.ok:
                r["answer"], r["supporting"] = res.value["answer"], list(res.value["supporting"])
            r["steps"].append({"step": "answer", "ok": res.ok, "answer": r["answer"], "supporting": r["supporting"]})

    def _check(self, r: dict[str, Any], stated: Sequence[tuple[str, str]]) -> dict[str, Any]:
        return causal_consistency([(c, e) for c, e, _ in r["pairs"]], stated, r["question"], r["answer"],
                                  threshold=self.match_threshold, max_pairs=self.max_pairs)

    def _consistency(self, recs: list[dict[str, Any]]) -> None:
        low = []
        for r in recs:
            check = self._check(r, r["links"])
            r["consistency_initial"] = r["consistency_final"] = check["score"]
            r["steps"].append({"step": "causal_consistency", "tau": self.tau, **check})
            if check["checked"] and check["score"] < self.tau:
                stated_ok = {tuple(p) for p in check["agree"]}
                bad = [pair_statement(c, e) for c, e in r["links"]
                       if not any(_same(c, e, a, b, self.match_threshold) for a, b in stated_ok)]
                bad += [f"{e} causes {c}." for c, e in check["contradicted"] if f"{e} causes {c}." not in bad]
                low.append((r, bad))
        if not low:
            return
        inputs = [{"question": r["question"], "answer": r["answer"] or "unknown", "passages": r["evidence"],
                   "unsupported_claims": bad} for r, bad in low]
        for (r, bad), res in zip(low, self.llm.complete_structured_batch("strict_rewrite", inputs)):
            r["fallback_taken"] = True
            if res.ok:
                r["answer"], r["supporting"] = res.value["answer"], list(res.value["supporting"])
                cited = [int(k.split(":")[1]) for k in r["supporting"] if str(k).startswith("pair:")]
                r["links"] = [(r["pairs"][i][0], r["pairs"][i][1]) for i in cited if i < len(r["pairs"])]
                r["summary"] = ""
            check = self._check(r, r["links"])
            r["consistency_final"] = check["score"]
            r["steps"].append({"step": "strict_regeneration", "reason": "causal consistency below tau", "ok": res.ok,
                               "unsupported_claims": bad, "answer": r["answer"], "supporting": r["supporting"],
                               "consistency": check["score"], "links": [list(x) for x in r["links"]]})

    def _hallucination(self, recs: list[dict[str, Any]]) -> None:
        active = list(recs)
        for r in recs:
            r["hallucination"] = r["hallucination_initial"] = None
        for rnd in range(self.max_rounds + 1):
            if not active:
                break
            claim_res = self.llm.complete_structured_batch(
                "claim_extraction", [{"text": r["answer"] or "unknown", "question": r["question"]} for r in active])
            claims: list[list[str] | None] = [res.value if res.ok else None for res in claim_res]
            flat = [(i, c) for i, cs in enumerate(claims) if cs for c in cs]
            support = self.llm.complete_structured_batch(
                "claim_support", [{"claim": c, "passages": active[i]["evidence"]} for i, c in flat]) if flat else []
            verdicts: list[list[str]] = [[] for _ in active]
            evidence: list[list[list[str]]] = [[] for _ in active]
            for (i, _), res in zip(flat, support):
                verdicts[i].append(res.value["verdict"] if res.ok else "not_enough_info")
                evidence[i].append(list(res.value["evidence"]) if res.ok else [])
            rewrite = []
            for i, r in enumerate(active):
                if claims[i] is None:
                    r["steps"].append({"step": "claim_check", "round": rnd, "ok": False,
                                       "error": str(claim_res[i].error_kind)})
                    continue
                h = hallucination_rate(verdicts[i])
                r["hallucination"] = h
                if r["hallucination_initial"] is None:
                    r["hallucination_initial"] = h
                r["steps"].append({"step": "claim_check", "round": rnd, "ok": True, "delta": self.delta,
                                   "claims": [{"claim": c, "verdict": v, "evidence": ev} for c, v, ev in
                                              zip(claims[i] or [], verdicts[i], evidence[i])],
                                   "hallucination": h})
                if h > self.delta and rnd < self.max_rounds:
                    rewrite.append((r, [c for c, v in zip(claims[i] or [], verdicts[i]) if v != "supported"]))
            if not rewrite:
                break
            inputs = [{"question": r["question"], "answer": r["answer"] or "unknown", "passages": r["evidence"],
                       "unsupported_claims": bad} for r, bad in rewrite]
            for (r, bad), res in zip(rewrite, self.llm.complete_structured_batch("strict_rewrite", inputs)):
                r["rewrites"] += 1
                if res.ok:
                    r["answer"], r["supporting"] = res.value["answer"], list(res.value["supporting"])
                r["steps"].append({"step": "rewrite", "round": rnd, "reason": "hallucination above delta",
                                   "ok": res.ok, "unsupported_claims": bad, "answer": r["answer"],
                                   "supporting": r["supporting"]})
            active = [r for r, _ in rewrite]

    @staticmethod
    def _public(r: dict[str, Any]) -> dict[str, Any]:
        return {"answer": r["answer"], "supporting": r["supporting"],
                "context": {"summary": r["summary"], "links": [list(x) for x in r["links"]]},
                "consistency_initial": r["consistency_initial"], "consistency_final": r["consistency_final"],
                "fallback_taken": r["fallback_taken"], "hallucination_initial": r["hallucination_initial"],
                "hallucination": r["hallucination"], "rewrites": r["rewrites"], "steps": r["steps"]}


def _same(c: str, e: str, a: str, b: str, threshold: float) -> bool:
    from hyperrag.eval.causal import span_similarity

    return span_similarity(c, a) >= threshold and span_similarity(e, b) >= threshold


__all__ = ["CausalGenerator", "context_text", "pair_statement"]
