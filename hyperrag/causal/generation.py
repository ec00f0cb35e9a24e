"""CDF-RAG's generation with its checks (§2.4–2.5): knowledge rewriting, the answer, the causal graph check with
fallback generation, and hallucination detection with correction.

For each question, given the knowledge set K (the passages of the semantic top-k ∪ the causal paths) and the causal
pairs C_graph on the retrieved paths:

  1. **rewrite** (``rewrite_context``, Table 3's "Rewriter") — the LLM condenses K into a compact causal context: a
     summary and the cause → effect links the evidence supports (:class:`~hyperrag.causal.tasks.CausalContextRewrite`);
     a failed call falls back to the verbatim pairs;
  2. **answer** ŷ — ``grounded_answer`` over the causal context and the passages (with the options of a
     multiple-choice question);
  3. **causal graph check** (``causal_check``) — ``S_causal = mean over C_graph of 𝕀(C → E ⊨ ŷ)``: every retrieved
     pair is judged against the *answer*: by the LLM (``causal_entailment``, one call per answer for all its pairs)
     or, in the labelled LLM-free form (``causal_check: lexical``, and whenever the LLM call fails — counted), by
     :func:`lexical_entailment`. **Below τ the answer is regenerated under stricter grounding** (``strict_rewrite``
     over K and the pair statements, with the pairs the answer contradicted or left out as the claims to fix) and
     checked again;
  4. **hallucination detection and correction** (``hallucination_check``, Table 3's "Hallucination Correction") —
     ``claim_extraction`` on the answer, ``claim_support`` of each claim against K (passages + pair statements),
     ``S_hallucination = 1 − supported/total``; **above δ the answer is rewritten** (``strict_rewrite`` with the
     unsupported claims) and checked again, at most ``max_rounds`` rewrites.

A record's ``checks_passed`` says whether the final answer is non-empty, not an abstention, and passes the checks
that ran (S_causal ≥ τ, S_hallucination ≤ δ); the retriever's feedback loop re-enters refinement and retrieval when
it is False (``max_requery``). Every step is appended to the record's ``steps``; every configured LLM step that did
not run (failed call, no LLM) is counted in ``skipped`` by task name.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from hyperrag.causal.tasks import CausalContextRewrite
from hyperrag.config.validation import NonNegativeInt, Probability, settings
from hyperrag.eval.text import content_tokens, is_abstention

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)

Passage = tuple[str, str]  # (passage id, text)
Pair = tuple[str, str, str, str]  # (cause, effect, provenance passage id, causal statement: "" = none)


def pair_statement(pair: Sequence[str]) -> str:
    """The pair as a sentence: the verifier's rephrased statement when there is one, else "C causes E."."""
    statement = pair[3] if len(pair) > 3 else ""
    return statement.strip() or f"{pair[0]} causes {pair[1]}."


def context_text(summary: str, links: Sequence[tuple[str, str]]) -> str:
    lines = [summary.strip()] if summary.strip() else []
    if links:
        lines.append("Causal links:")
        lines.extend(f"- {c} → {e}" for c, e in links)
    return "\n".join(lines) or "(no causal context)"


def coverage(span: str, text_tokens: set[str]) -> float:
    """Share of ``span``'s content tokens found in ``text_tokens`` (0 for a span without content tokens)."""
    tokens = set(content_tokens(span))
    return len(tokens & text_tokens) / len(tokens) if tokens else 0.0


def lexical_entailment(pairs: Sequence[Sequence[str]], answer: str, threshold: float) -> list[str]:
    """The LLM-free form of 𝕀(C → E ⊨ ŷ): a pair is ``maintained`` when at least ``threshold`` of both its cause's
    and its effect's content words occur in the answer, ``not_addressed`` otherwise (direction is not judged)."""
    tokens = set(content_tokens(answer))
    return ["maintained" if coverage(p[0], tokens) >= threshold and coverage(p[1], tokens) >= threshold
            else "not_addressed" for p in pairs]


@settings
class GenerationSettings:
    """CDF-RAG's ``generation``.

    Attributes:
        enabled: generate at all (needs an LLM).
        rewrite_context: knowledge rewriting before the answer (Table 3's "Rewriter"; off: the verbatim pairs are
            the context).
        causal_check: the causal graph check's verdicts: ``llm`` (``causal_entailment``; a failed call falls back to
            ``lexical``), ``lexical`` (the LLM-free form), ``off``.
        tau: S_causal below it → fallback generation under stricter grounding.
        hallucination_check: claim check and rewrite (Table 3's "Hallucination Correction").
        delta: S_hallucination above it → rewrite.
        max_rounds: rewrites after the hallucination check, at most.
        max_requery: feedback rounds that re-enter refinement and retrieval when the checks fail (B.3); 0 = off.
        max_pairs: causal pairs shown and checked.
        match_threshold: content-word coverage of a pair's cause and effect for the lexical check.
    """

    enabled: bool
    rewrite_context: bool
    causal_check: Literal["llm", "lexical", "off"]
    tau: Probability
    hallucination_check: bool
    delta: Probability
    max_rounds: NonNegativeInt
    max_requery: NonNegativeInt
    max_pairs: NonNegativeInt
    match_threshold: Probability


class CausalGenerator:
    """Args:
        llm: the LLM (an unavailable one: every step is counted as skipped and no answer is made).
        settings: :class:`GenerationSettings` (``enabled`` and ``max_requery`` are the retriever's).
    """

    def __init__(self, llm: LanguageModel, settings: GenerationSettings) -> None:
        self.llm = llm
        self.s = settings
        self.rewrite_task = CausalContextRewrite()

    @property
    def steps(self) -> list[str]:
        """The LLM tasks this configuration runs per question (what is counted when there is no LLM)."""
        s = self.s
        out = (["causal_context_rewrite"] if s.rewrite_context else []) + ["grounded_answer"]
        out += ["causal_entailment"] if s.causal_check == "llm" else []
        return out + (["claim_extraction"] if s.hallucination_check else [])

    def run(self, question: str, passages: Sequence[Passage], pairs: Sequence[Pair],
            options: Sequence[str] = ()) -> dict[str, Any]:
        return self.run_batch([question], [passages], [pairs], [options])[0]

    def run_batch(self, questions: Sequence[str], passages: Sequence[Sequence[Passage]],
                  pairs: Sequence[Sequence[Pair]], options: Sequence[Sequence[str]] | None = None
                  ) -> list[dict[str, Any]]:
        """One record per question: ``answer``, ``supporting``, ``context``, S_causal and S_hallucination before and
        after their corrections, ``fallback_taken``, ``rewrites``, ``checks_passed``, ``skipped`` and ``steps``.

        Args:
            passages: per question, the knowledge set's passages ``(id, text)``.
            pairs: per question, the causal pairs ``(cause, effect, passage id, statement)`` of its paths.
            options: per question, its answer options (multiple choice; empty for free-form).
        """
        recs: list[dict[str, Any]] = []
        for i, (q, ps, prs) in enumerate(zip(questions, passages, pairs)):
            prs = list(dict.fromkeys(tuple(p) + ("",) * (4 - len(p)) for p in prs))[: self.s.max_pairs]
            evidence = list(ps) + [(f"pair:{j}", f"{pair_statement(p)} (source passage {p[2]})")
                                   for j, p in enumerate(prs)]
            recs.append({"question": q, "passages": list(ps), "pairs": prs, "evidence": evidence,
                         "options": list(options[i]) if options else [], "steps": [], "answer": "",
                         "supporting": [], "fallback_taken": False, "rewrites": 0, "summary": "",
                         "links": [(p[0], p[1]) for p in prs], "skipped": Counter(), "s_causal": None,
                         "s_causal_initial": None, "hallucination": None, "hallucination_initial": None})
        if not getattr(self.llm, "available", False):
            for r in recs:
                r["skipped"].update(self.steps)
                r["steps"].append({"step": "generation", "ok": False, "error": "no LLM"})
        else:
            self._rewrite(recs)
            self._answer(recs)
            if self.s.causal_check != "off":
                self._causal_check(recs)
            if self.s.hallucination_check:
                self._hallucination(recs)
        return [self._public(r) for r in recs]

    # ---- helpers ---------------------------------------------------------------------------------------
    def _with_options(self, r: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
        if r["options"]:  # only multiple-choice inputs carry the key: free-form prompts (and caches) unchanged
            inputs["options"] = r["options"]
        return inputs

    def _strict(self, batch: list[tuple[dict[str, Any], list[str]]]) -> list[Any]:
        inputs = [self._with_options(r, {"question": r["question"], "answer": r["answer"] or "unknown",
                                         "passages": r["evidence"], "unsupported_claims": bad}) for r, bad in batch]
        results = self.llm.complete_structured_batch("strict_rewrite", inputs)
        for (r, _), res in zip(batch, results):
            if res.ok:
                r["answer"], r["supporting"] = res.value["answer"], list(res.value["supporting"])
            else:
                r["skipped"]["strict_rewrite"] += 1
        return results

    # ---- steps -----------------------------------------------------------------------------------------
    def _rewrite(self, recs: list[dict[str, Any]]) -> None:
        if not self.s.rewrite_context:
            return
        inputs = [{"question": r["question"], "passages": r["passages"],
                   "causal_pairs": [(p[0], p[1]) for p in r["pairs"]]} for r in recs]
        for r, res in zip(recs, self.llm.complete_structured_batch(self.rewrite_task, inputs)):
            if res.ok:
                r["summary"], r["links"] = res.value["summary"], [tuple(x) for x in res.value["links"]]
            else:
                r["skipped"]["causal_context_rewrite"] += 1
            r["steps"].append({"step": "rewrite_context", "ok": res.ok, "summary": r["summary"],
                               "links": [list(x) for x in r["links"]],
                               **({} if res.ok else {"error": str(res.error_kind), "fallback": "verbatim pairs"})})

    def _answer(self, recs: list[dict[str, Any]]) -> None:
        inputs = [self._with_options(r, {"question": r["question"], "passages": (
            [("causal_context", context_text(r["summary"], r["links"]))] if r["summary"] or r["links"] else [])
            + r["passages"]}) for r in recs]
        for r, res in zip(recs, self.llm.complete_structured_batch("grounded_answer", inputs)):
            if res.ok:
                r["answer"], r["supporting"] = res.value["answer"], list(res.value["supporting"])
            else:
                r["skipped"]["grounded_answer"] += 1
            r["steps"].append({"step": "answer", "ok": res.ok, "answer": r["answer"], "supporting": r["supporting"],
                               **({} if res.ok else {"error": str(res.error_kind)})})

    def _judge(self, recs: list[dict[str, Any]]) -> list[tuple[list[str], str]]:
        """Per record, the verdict of each pair against the current answer and where they came from."""
        out: list[tuple[list[str], str]] = [
            (lexical_entailment(r["pairs"], r["answer"], self.s.match_threshold), "lexical") for r in recs]
        if self.s.causal_check != "llm":
            return out
        todo = [i for i, r in enumerate(recs) if r["pairs"] and r["answer"].strip()]
        inputs = [{"question": recs[i]["question"], "answer": recs[i]["answer"],
                   "pairs": [pair_statement(p) for p in recs[i]["pairs"]]} for i in todo]
        for i, res in zip(todo, self.llm.complete_structured_batch("causal_entailment", inputs) if todo else []):
            if res.ok:
                out[i] = (list(res.value), "llm")
            else:  # the lexical form stands in, counted
                recs[i]["skipped"]["causal_entailment"] += 1
        return out

    def _causal_check(self, recs: list[dict[str, Any]]) -> None:
        judged = [r for r in recs if r["pairs"]]  # |C_graph| = 0: S_causal is undefined, nothing to check
        low: list[tuple[dict[str, Any], list[str]]] = []
        for r, (verdicts, source) in zip(judged, self._judge(judged)):
            score = sum(v == "maintained" for v in verdicts) / len(verdicts)
            r["s_causal"] = r["s_causal_initial"] = score
            r["steps"].append({"step": "causal_check", "tau": self.s.tau, "source": source, "score": score,
                               "verdicts": [{"pair": list(p[:2]), "verdict": v} for p, v in zip(r["pairs"], verdicts)]})
            if score < self.s.tau:
                low.append((r, [pair_statement(p) for p, v in zip(r["pairs"], verdicts) if v != "maintained"]))
        if not low:
            return
        for (r, bad), res in zip(low, self._strict(low)):
            r["fallback_taken"] = True
            r["steps"].append({"step": "fallback_generation", "reason": "S_causal below tau", "ok": res.ok,
                               "claims_to_fix": bad, "answer": r["answer"], "supporting": r["supporting"]})
        rechecked = [r for r, _ in low]
        for r, (verdicts, source) in zip(rechecked, self._judge(rechecked)):
            r["s_causal"] = sum(v == "maintained" for v in verdicts) / len(verdicts)
            r["steps"].append({"step": "causal_check", "tau": self.s.tau, "source": source, "score": r["s_causal"],
                               "after": "fallback_generation",
                               "verdicts": [{"pair": list(p[:2]), "verdict": v} for p, v in zip(r["pairs"], verdicts)]})

    def _hallucination(self, recs: list[dict[str, Any]]) -> None:
        from hyperrag.eval.causal import hallucination_score

        active = list(recs)
        for rnd in range(self.s.max_rounds + 1):
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
                if not res.ok:
                    active[i]["skipped"]["claim_support"] += 1
            rewrite = []
            for i, r in enumerate(active):
                if claims[i] is None:
                    r["skipped"]["claim_extraction"] += 1
                    r["steps"].append({"step": "claim_check", "round": rnd, "ok": False,
                                       "error": str(claim_res[i].error_kind)})
                    continue
                h = hallucination_score(verdicts[i])
                r["hallucination"] = h
                if r["hallucination_initial"] is None:
                    r["hallucination_initial"] = h
                r["steps"].append({"step": "claim_check", "round": rnd, "ok": True, "delta": self.s.delta,
                                   "claims": [{"claim": c, "verdict": v, "evidence": ev} for c, v, ev in
                                              zip(claims[i] or [], verdicts[i], evidence[i])],
                                   "hallucination": h})
                if h > self.s.delta and rnd < self.s.max_rounds:
                    rewrite.append((r, [c for c, v in zip(claims[i] or [], verdicts[i]) if v != "supported"]))
            if not rewrite:
                break
            for (r, bad), res in zip(rewrite, self._strict(rewrite)):
                r["rewrites"] += 1
                r["steps"].append({"step": "rewrite", "round": rnd, "reason": "S_hallucination above delta",
                                   "ok": res.ok, "unsupported_claims": bad, "answer": r["answer"],
                                   "supporting": r["supporting"]})
            active = [r for r, _ in rewrite]

    def _public(self, r: dict[str, Any]) -> dict[str, Any]:
        answered = bool(r["answer"].strip()) and not is_abstention(r["answer"])
        causal_ok = r["s_causal"] is None or r["s_causal"] >= self.s.tau
        hallucination_ok = r["hallucination"] is None or r["hallucination"] <= self.s.delta
        return {"answer": r["answer"], "supporting": r["supporting"],
                "context": {"summary": r["summary"], "links": [list(x) for x in r["links"]]},
                "pairs": [list(p) for p in r["pairs"]],
                "s_causal_initial": r["s_causal_initial"], "s_causal": r["s_causal"],
                "fallback_taken": r["fallback_taken"], "hallucination_initial": r["hallucination_initial"],
                "hallucination": r["hallucination"], "rewrites": r["rewrites"],
                "checks_passed": answered and causal_ok and hallucination_ok,
                "skipped": dict(r["skipped"]), "steps": r["steps"]}


__all__ = ["CausalGenerator", "GenerationSettings", "context_text", "coverage", "lexical_entailment",
           "pair_statement"]
