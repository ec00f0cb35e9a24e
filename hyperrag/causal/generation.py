"""CDF-RAG's generation with its checks (§2.4–2.5): knowledge rewriting, the answer, the causal graph check with
fallback generation, and hallucination detection with correction.

For each question, given the knowledge set K (the passages of the semantic top-k ∪ the causal paths) and the causal
pairs C_graph on the retrieved paths:

  1. **rewrite** (``rewrite_context``, Table 3's "Rewriter") — the LLM condenses K into a compact causal context: a
     summary and the cause → effect links the evidence supports (:class:`~hyperrag.causal.tasks.CausalContextRewrite`);
     a failed call falls back to the verbatim pairs;
  2. **answer** ŷ — ``grounded_answer`` over the causal context and the passages (with the options of a
     multiple-choice question), in the run's ``answer_style``: ``explanatory`` is how the paper generates (an
     explanation grounded in the causal paths, plus the short answer EM/F1 score), ``short`` the bare answer;
  3. **causal graph check** (``causal_check``) — ``S_causal = mean over the checked pairs of 𝕀(C → E ⊨ ŷ)``. The
     checked pairs (``check_scope``) are, with ``answer``, the pairs the answer is *about*: those of the passages it
     cites (or of the causal context's links, when it cites that) and those it states itself (both ends' content
     words in ŷ); with ``all``, every retrieved pair (the formula over all of C_graph). An empty scope with a
     non-empty C_graph gives S_causal = 0 (an answer that ignores every retrieved pair fails the check; only
     |C_graph| = 0 leaves it undefined). Verdicts come from the LLM
     (``causal_entailment``, one call per answer) or, in the labelled LLM-free form (``causal_check: lexical``, and
     whenever the LLM call fails — counted), from :func:`lexical_entailment`. **Below τ the answer is regenerated
     under stricter grounding** (``strict_rewrite`` in its ``causal`` mode: the relations ŷ keeps are listed to be
     kept, the ones it misses to be accounted for, the contradicted ones to be corrected) and checked again; a
     regeneration that drops a relation ŷ kept is rejected (ŷ stays, ``fallback_rejected``);
  4. **hallucination detection and correction** (``hallucination_check``, Table 3's "Hallucination Correction") —
     ``claim_extraction`` on the answer, ``claim_support`` of each claim against K (passages + pair statements),
     ``S_hallucination = 1 − supported/total``; **above δ the answer is rewritten** (``strict_rewrite`` in its
     ``claims`` mode, with the unsupported claims) and checked again, at most ``max_rounds`` rewrites.

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
    from hyperrag.llm.tasks.answer_style import AnswerStyle
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)

Passage = tuple[str, str]  # (passage id, text)
CONTEXT_KEY = "causal_context"  # the rewritten causal context's key among the answer's evidence
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


def answer_scope(pairs: Sequence[Sequence[str]], answer: str, supporting: Sequence[str],
                 links: Sequence[Sequence[str]], threshold: float) -> list[int]:
    """Positions of the pairs an answer is about: the pairs of the passages it cites (a cited ``pair:j`` item is
    pair j; the cited causal context stands for its links), and the pairs it states (both ends' content words in the
    answer, :func:`lexical_entailment`)."""
    from hyperrag.eval.causal import pair_key

    cited = {str(s) for s in supporting}
    linked = {pair_key(c, e) for c, e in links} if CONTEXT_KEY in cited else set()
    stated = lexical_entailment(pairs, answer, threshold)
    return [j for j, p in enumerate(pairs)
            if p[2] in cited or f"pair:{j}" in cited or pair_key(p[0], p[1]) in linked or stated[j] == "maintained"]


@settings
class GenerationSettings:
    """CDF-RAG's ``generation``.

    Attributes:
        enabled: generate at all (needs an LLM).
        rewrite_context: knowledge rewriting before the answer (Table 3's "Rewriter"; off: the verbatim pairs are
            the context).
        causal_check: the causal graph check's verdicts: ``llm`` (``causal_entailment``; a failed call falls back to
            ``lexical``), ``lexical`` (the LLM-free form), ``off``.
        check_scope: the pairs S_causal is taken over: ``answer`` (the pairs the answer is about: of the passages it
            cites, or stated in it) or ``all`` (every retrieved pair).
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
    check_scope: Literal["answer", "all"]
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
        style: the answer style of the answer, the fallback and the rewrite (``short`` | ``explanatory``).
    """

    def __init__(self, llm: LanguageModel, settings: GenerationSettings, style: AnswerStyle = "short") -> None:
        from hyperrag.llm.tasks.grounded_answer import GroundedAnswer
        from hyperrag.llm.tasks.strict_rewrite import StrictRewrite

        self.llm = llm
        self.s = settings
        self.rewrite_task = CausalContextRewrite()
        self.answer_task = GroundedAnswer(style=style)
        self.fallback_task = StrictRewrite(style=style, mode="causal")
        self.claims_task = StrictRewrite(style=style, mode="claims")

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
        """One record per question: ``answer`` (and ``short_answer`` when explanatory), ``supporting``,
        ``context``, the checked pairs, S_causal and S_hallucination before and after their corrections,
        ``fallback_taken`` / ``fallback_rejected``, ``rewrites``, ``checks_passed``, ``skipped`` and ``steps``.

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
                         "short_answer": None, "explanation": None, "supporting": [], "fallback_taken": False,
                         "fallback_rejected": False, "rewrites": 0, "summary": "",
                         "links": [(p[0], p[1]) for p in prs], "skipped": Counter(), "s_causal": None,
                         "s_causal_initial": None, "checked_pairs": None, "hallucination": None,
                         "hallucination_initial": None})
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

    def _take(self, r: dict[str, Any], value: dict[str, Any]) -> None:
        """Adopt a reply's answer, short answer and citations."""
        r["answer"], r["supporting"] = value["answer"], list(value["supporting"])
        r["short_answer"] = value.get("short_answer")
        r["explanation"] = value.get("explanation")  # an explained option: the answer is the option's text

    @staticmethod
    def response(r: dict[str, Any]) -> str:
        """What the checks read: the answer, with an explained option's explanation."""
        return f"{r['answer']}. {r['explanation']}" if r.get("explanation") else r["answer"]

    def _strict(self, task: Any, batch: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[Any]:
        """Regenerate under strict grounding (``task``: the causal fallback or the claims rewrite); ``batch`` holds
        each record with the mode's lists (``keep`` / ``missing`` / ``contradicted`` or ``unsupported_claims``)."""
        inputs = [self._with_options(r, {"question": r["question"], "answer": self.response(r) or "unknown",
                                         "passages": r["evidence"], **lists}) for r, lists in batch]
        results = self.llm.complete_structured_batch(task, inputs)
        for (r, _), res in zip(batch, results):
            if res.ok:
                self._take(r, res.value)
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
            [(CONTEXT_KEY, context_text(r["summary"], r["links"]))] if r["summary"] or r["links"] else [])
            + r["passages"]}) for r in recs]
        for r, res in zip(recs, self.llm.complete_structured_batch(self.answer_task, inputs)):
            if res.ok:
                self._take(r, res.value)
            else:
                r["skipped"]["grounded_answer"] += 1
            r["steps"].append({"step": "answer", "ok": res.ok, "answer": r["answer"],
                               "short_answer": r["short_answer"], "supporting": r["supporting"],
                               **({} if res.ok else {"error": str(res.error_kind)})})

    def scope(self, r: dict[str, Any]) -> list[int]:
        """Positions of the pairs S_causal is taken over for the record's current answer (``check_scope``)."""
        if self.s.check_scope == "all":
            return list(range(len(r["pairs"])))
        return answer_scope(r["pairs"], self.response(r), r["supporting"], r["links"], self.s.match_threshold)

    def _judge(self, recs: list[dict[str, Any]], scopes: list[list[int]]) -> list[tuple[list[str], str]]:
        """Per record, the verdict of each pair of its scope against the current answer and where they came from."""
        out: list[tuple[list[str], str]] = [
            (lexical_entailment([r["pairs"][j] for j in sc], self.response(r), self.s.match_threshold), "lexical")
            for r, sc in zip(recs, scopes)]
        if self.s.causal_check != "llm":
            return out
        todo = [i for i, (r, sc) in enumerate(zip(recs, scopes)) if sc and r["answer"].strip()]
        inputs = [{"question": recs[i]["question"], "answer": self.response(recs[i]),
                   "pairs": [pair_statement(recs[i]["pairs"][j]) for j in scopes[i]]} for i in todo]
        for i, res in zip(todo, self.llm.complete_structured_batch("causal_entailment", inputs) if todo else []):
            if res.ok:
                out[i] = (list(res.value), "llm")
            else:  # the lexical form stands in, counted
                recs[i]["skipped"]["causal_entailment"] += 1
        return out

    def _check_step(self, r: dict[str, Any], scope: list[int], verdicts: list[str], source: str, score: float | None,
                    **extra: Any) -> None:
        r["steps"].append({"step": "causal_check", "tau": self.s.tau, "scope": self.s.check_scope, "source": source,
                           "score": score, **extra,
                           "verdicts": [{"pair": list(r["pairs"][j][:2]), "verdict": v}
                                        for j, v in zip(scope, verdicts)]})

    def _causal_check(self, recs: list[dict[str, Any]]) -> None:
        judged = [r for r in recs if r["pairs"]]  # |C_graph| = 0: S_causal is undefined, nothing to check
        scopes = [self.scope(r) for r in judged]
        low: list[tuple[dict[str, Any], dict[str, Any]]] = []
        kept_before: dict[int, list[int]] = {}
        for r, sc, (verdicts, source) in zip(judged, scopes, self._judge(judged, scopes)):
            r["checked_pairs"] = len(sc)
            # an answer about none of a non-empty C_graph's pairs fails the check (S_causal = 0), it does not pass it
            score = sum(v == "maintained" for v in verdicts) / len(verdicts) if verdicts else 0.0
            r["s_causal"] = r["s_causal_initial"] = score
            self._check_step(r, sc, verdicts, source, score)
            if score < self.s.tau:
                statements = {v: [pair_statement(r["pairs"][j]) for j, x in zip(sc, verdicts) if x == v]
                              for v in ("maintained", "not_addressed", "contradicted")}
                kept_before[id(r)] = [j for j, x in zip(sc, verdicts) if x == "maintained"]
                low.append((r, {"keep": statements["maintained"], "missing": statements["not_addressed"],
                                "contradicted": statements["contradicted"]}))
        if not low:
            return
        drafts = {id(r): (r["answer"], r["short_answer"], r["explanation"], list(r["supporting"])) for r, _ in low}
        for (r, lists), res in zip(low, self._strict(self.fallback_task, low)):
            r["fallback_taken"] = True
            r["steps"].append({"step": "fallback_generation", "reason": "S_causal below tau", "ok": res.ok,
                               "keep": lists["keep"], "missing": lists["missing"],
                               "contradicted": lists["contradicted"], "answer": r["answer"],
                               "short_answer": r["short_answer"], "supporting": r["supporting"]})
        rechecked = [r for r, _ in low]
        # the new answer is judged on its own scope and on every pair the draft kept (which it must still keep)
        new_scopes = [sorted(set(self.scope(r)) | set(kept_before[id(r)])) for r in rechecked]
        for r, sc, (verdicts, source) in zip(rechecked, new_scopes, self._judge(rechecked, new_scopes)):
            verdict = dict(zip(sc, verdicts))
            dropped = [j for j in kept_before[id(r)] if verdict.get(j) != "maintained"]
            if dropped:  # the regeneration lost a relation the draft kept: the draft stays
                r["answer"], r["short_answer"], r["explanation"], r["supporting"] = drafts[id(r)]
                r["fallback_rejected"] = True
                self._check_step(r, sc, verdicts, source, r["s_causal"], after="fallback_generation",
                                 rejected=True, dropped=[list(r["pairs"][j][:2]) for j in dropped])
                continue
            scored = list(verdict.values())  # sc is the answer's own scope with the draft's kept pairs
            r["checked_pairs"] = len(scored)
            r["s_causal"] = sum(v == "maintained" for v in scored) / len(scored) if scored else 0.0
            self._check_step(r, sc, verdicts, source, r["s_causal"], after="fallback_generation")

    def _hallucination(self, recs: list[dict[str, Any]]) -> None:
        from hyperrag.eval.causal import hallucination_score

        active = list(recs)
        for rnd in range(self.s.max_rounds + 1):
            if not active:
                break
            claim_res = self.llm.complete_structured_batch(
                "claim_extraction", [{"text": self.response(r) or "unknown", "question": r["question"]}
                                     for r in active])
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
                    rewrite.append((r, {"unsupported_claims": [c for c, v in zip(claims[i] or [], verdicts[i])
                                                               if v != "supported"]}))
            if not rewrite:
                break
            for (r, lists), res in zip(rewrite, self._strict(self.claims_task, rewrite)):
                r["rewrites"] += 1
                r["steps"].append({"step": "rewrite", "round": rnd, "reason": "S_hallucination above delta",
                                   "ok": res.ok, "unsupported_claims": lists["unsupported_claims"],
                                   "answer": r["answer"], "short_answer": r["short_answer"],
                                   "supporting": r["supporting"]})
            active = [r for r, _ in rewrite]

    def _public(self, r: dict[str, Any]) -> dict[str, Any]:
        answered = bool(r["answer"].strip()) and not is_abstention(r["answer"])
        causal_ok = r["s_causal"] is None or r["s_causal"] >= self.s.tau
        hallucination_ok = r["hallucination"] is None or r["hallucination"] <= self.s.delta
        return {"answer": r["answer"], "short_answer": r["short_answer"], "explanation": r["explanation"],
                "supporting": r["supporting"],
                "context": {"summary": r["summary"], "links": [list(x) for x in r["links"]]},
                "pairs": [list(p) for p in r["pairs"]],
                "s_causal_initial": r["s_causal_initial"], "s_causal": r["s_causal"],
                "checked_pairs": r["checked_pairs"], "fallback_taken": r["fallback_taken"],
                "fallback_rejected": r["fallback_rejected"], "hallucination_initial": r["hallucination_initial"],
                "hallucination": r["hallucination"], "rewrites": r["rewrites"],
                "checks_passed": answered and causal_ok and hallucination_ok,
                "skipped": dict(r["skipped"]), "steps": r["steps"]}


__all__ = ["CONTEXT_KEY", "CausalGenerator", "GenerationSettings", "answer_scope", "context_text", "coverage",
           "lexical_entailment", "pair_statement"]
