"""CDF-RAG's generation and checks against the scripted fake server (a test double, not a model): the causal graph
check reads the *answer* (S_causal over the pairs it is about), fallback generation fires below τ and keeps every
pair the answer already covered, the hallucination rewrite fires above δ, and every branch is taken — or not —
exactly as the script says."""

import json
import re
from collections import Counter
from dataclasses import replace

import pytest

from hyperrag.causal.generation import CausalGenerator, lexical_entailment
from hyperrag.config import method_settings
from tests.causal.llm_double import fake_llm, task_of, user_text
from tests.llm.fake_server import FakeOpenAIServer

GENERATION = method_settings("cdfrag").generation

QUESTION = "Why did the town of Varden lose its drinking water supply?"
PASSAGES = [("c01", "Severe soil erosion caused the silting of the Varden reservoir."),
            ("c00", "Heavy logging in the Varden valley led to severe soil erosion.")]
PAIRS = [("heavy logging in the Varden valley", "severe soil erosion", "c00", ""),
         ("severe soil erosion", "the silting of the Varden reservoir", "c01",
          "Severe soil erosion silted up the Varden reservoir.")]
GOOD = "Logging in the Varden valley caused severe soil erosion, which silted the Varden reservoir."


def item_id(prompt: str, needle: str) -> str:
    """The short ID (P1...) of the shown item whose text contains ``needle``."""
    for pid, text in re.findall(r'<passage id="(P\d+)">\n(.*?)\n</passage>', prompt, re.DOTALL):
        if needle in text:
            return pid
    raise AssertionError(f"{needle!r} not shown")


def answer_in(prompt: str) -> str:
    return re.search(r"Answer:\n<data>\n(.*?)\n</data>", prompt, re.DOTALL).group(1)


def section(prompt: str, title: str) -> list[str]:
    """The statements a strict-rewrite prompt lists under ``title``."""
    if f"{title}:\n" not in prompt:
        return []
    body = prompt.split(f"{title}:\n", 1)[1]
    out = []
    for m in re.finditer(r"<data>\n(.*?)\n</data>\n", body, re.DOTALL):
        if body[: m.start()].strip():  # only the blocks right under the title
            break
        out.append(m.group(1))
        body = body[m.end():]
    return out


def maintained(fact: str, answer: str) -> bool:
    """The scripted judge: the logging → erosion pair is kept when the answer names logging and erosion; the
    erosion → silting pair when it names erosion and silting."""
    ans, fact = answer.lower(), fact.lower()
    if "logging" in fact:
        return "logging" in ans and "erosion" in ans
    return "erosion" in ans and "silt" in ans


class Script:
    """Replies per task. ``first``: the first answer; ``fallback``: what causal fallback generation answers;
    ``refute``: claims of answers containing it are refuted; ``entailment``: ``llm`` judges each pair by the answer
    text (:func:`maintained`), ``broken`` replies garbage; ``cite``: the display IDs the first answer cites;
    ``short``: the short answer of an explanatory reply (None: short style)."""

    def __init__(self, first: str = GOOD, fallback: str = GOOD, refute: str = "\0", entailment: str = "llm",
                 rewrite_links_equal_pairs: bool = True, cite: tuple[str, ...] = ("P1",),
                 short: str | None = None) -> None:
        self.first, self.fallback, self.refute, self.entailment = first, fallback, refute, entailment
        self.rewrite_links_equal_pairs = rewrite_links_equal_pairs
        self.cite, self.short = list(cite), short
        self.calls: Counter = Counter()
        self.prompts: dict[str, list[str]] = {}

    def reply(self, answer: str, ids: list[str]) -> str:
        out = {"answer": answer, "supporting_ids": ids}
        if self.short is not None:
            out["short_answer"] = self.short
        return json.dumps(out)

    def __call__(self, body: dict) -> str:
        task, prompt = task_of(body), user_text(body)
        self.calls[task] += 1
        self.prompts.setdefault(task, []).append(prompt)
        if task == "causal_context_rewrite":
            links = [{"cause": c, "effect": e} for c, e, _, _ in PAIRS] if self.rewrite_links_equal_pairs else []
            return json.dumps({"summary": "Logging eroded the soil, which silted the reservoir.", "causal_links": links})
        if task == "grounded_answer":
            return self.reply(self.first, self.cite)
        if task == "causal_entailment":
            if self.entailment == "broken":
                return "not json"
            ans = answer_in(prompt)
            facts = re.findall(r'<fact id="(C\d+)">\n(.*?)\n</fact>', prompt, re.DOTALL)
            return json.dumps({"judgements": [{"id": i, "verdict": "maintained" if maintained(f, ans)
                                               else "not_addressed"} for i, f in facts], "reason": ""})
        if task == "strict_rewrite":
            if "Relations to keep" in prompt or "Missing relations" in prompt:  # the causal fallback
                ids = [item_id(prompt, "Severe soil erosion silted up"), item_id(prompt, "heavy logging in")]
                return self.reply(self.fallback, ids)
            return self.reply("rewritten: " + GOOD, ["P1"])
        if task == "claim_extraction":
            text = re.search(r"Text:\n<data>\n(.*?)\n</data>", prompt, re.DOTALL).group(1)
            return json.dumps({"claims": [f"claim A of {text}", f"claim B of {text}"]})
        if task == "claim_support":
            refute = self.refute in prompt.split("Claim:")[-1]
            return json.dumps({"verdict": "refuted" if refute else "supported", "evidence_ids": ["P1"], "reason": ""})
        raise AssertionError(f"unexpected request {task}")


def run(tmp_path, script: Script, options=(), **kw) -> dict:
    with FakeOpenAIServer(responder=script) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        rec = CausalGenerator(llm, replace(GENERATION, **kw)).run(QUESTION, PASSAGES, PAIRS, options)
        assert server.stats["requests"] == sum(script.calls.values())
    return rec


def test_an_absurd_answer_fails_the_causal_check_even_when_the_rewrite_restates_the_pairs(tmp_path):
    """The check reads ŷ: links equal to the pairs no longer make an absurd answer consistent; below τ the
    fallback regenerates under strict grounding, which S_causal then accepts."""
    script = Script(first="bananas", fallback=GOOD)
    rec = run(tmp_path, script, tau=0.5)
    steps = [s["step"] for s in rec["steps"]]
    assert steps == ["rewrite_context", "answer", "causal_check", "fallback_generation", "causal_check",
                     "claim_check"]
    first = rec["steps"][2]
    assert first["source"] == "llm" and first["score"] == 0.0
    assert [v["verdict"] for v in first["verdicts"]] == ["not_addressed", "not_addressed"]
    fallback = rec["steps"][3]
    assert fallback["reason"] == "S_causal below tau" and fallback["answer"] == GOOD
    # the pairs the answer left out are what it must account for, stated as the verifier rephrased them; it kept none
    assert "Severe soil erosion silted up the Varden reservoir." in fallback["missing"]
    assert fallback["keep"] == [] and fallback["contradicted"] == []
    assert sorted(fallback["supporting"]) == ["pair:0", "pair:1"]
    assert rec["fallback_taken"] and rec["s_causal_initial"] == 0.0 and rec["s_causal"] == 1.0
    assert rec["answer"] == GOOD and rec["checks_passed"] and rec["skipped"] == {}
    assert script.calls == {"causal_context_rewrite": 1, "grounded_answer": 1, "causal_entailment": 2,
                            "strict_rewrite": 1, "claim_extraction": 1, "claim_support": 2}
    # the entailment prompt shows the answer and every retrieved pair
    assert "bananas" in script.prompts["causal_entailment"][0]
    assert "heavy logging in the Varden valley causes severe soil erosion." in script.prompts["causal_entailment"][0]


def test_without_the_rewrite_the_check_still_reads_the_answer(tmp_path):
    """Knowledge rewriting off (Table 3's stage before the Rewriter): S_causal is not 1 by construction."""
    script = Script(first="bananas", fallback="still bananas")
    rec = run(tmp_path, script, rewrite_context=False)
    assert "causal_context_rewrite" not in script.calls
    assert rec["s_causal_initial"] == 0.0 and rec["s_causal"] == 0.0 and rec["fallback_taken"]
    assert not rec["checks_passed"]  # what makes the retriever's feedback loop re-query


def test_consistent_and_supported_answer_takes_no_branch(tmp_path):
    script = Script()
    rec = run(tmp_path, script)
    assert [s["step"] for s in rec["steps"]] == ["rewrite_context", "answer", "causal_check", "claim_check"]
    assert rec["s_causal_initial"] == rec["s_causal"] == 1.0 and not rec["fallback_taken"]
    assert rec["hallucination"] == 0.0 and rec["rewrites"] == 0 and rec["checks_passed"]
    assert rec["answer"] == GOOD and "strict_rewrite" not in script.calls


def test_high_hallucination_rewrites_and_rewrites_are_bounded(tmp_path):
    once = run(tmp_path / "a", Script(refute="claim A of Logging"), delta=0.3, max_rounds=2)
    checks = [s for s in once["steps"] if s["step"] == "claim_check"]
    assert [c["hallucination"] for c in checks] == [0.5, 0.0] and once["rewrites"] == 1
    assert once["hallucination_initial"] == 0.5 and once["hallucination"] == 0.0
    assert once["answer"] == "rewritten: " + GOOD
    script = Script(refute="claim")
    always = run(tmp_path / "b", script, max_rounds=2)
    assert len([s for s in always["steps"] if s["step"] == "claim_check"]) == 3
    assert always["rewrites"] == 2 and always["hallucination"] == 1.0 and not always["checks_passed"]
    assert script.calls["strict_rewrite"] == 2


def test_failed_entailment_call_falls_back_to_the_lexical_check_and_is_counted(tmp_path):
    rec = run(tmp_path, Script(first="Severe soil erosion led to the silting of the Varden reservoir.", entailment="broken"))
    check = next(s for s in rec["steps"] if s["step"] == "causal_check")
    assert check["source"] == "lexical"
    # lexical form: the second pair's ends are both in the answer, the first pair's cause is not
    assert [v["verdict"] for v in check["verdicts"]] == ["not_addressed", "maintained"]
    assert rec["s_causal_initial"] == 0.5 and not rec["fallback_taken"]
    assert rec["skipped"]["causal_entailment"] == 1


def test_failed_rewrite_falls_back_to_verbatim_pairs(tmp_path):
    def broken_rewrite(body: dict) -> str:
        if task_of(body) == "causal_context_rewrite":
            return "not json at all"
        return Script()(body)

    with FakeOpenAIServer(responder=broken_rewrite) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        rec = CausalGenerator(llm, GENERATION).run(QUESTION, PASSAGES, PAIRS)
    first = rec["steps"][0]
    assert first["step"] == "rewrite_context" and first["ok"] is False and first["fallback"] == "verbatim pairs"
    assert rec["context"]["links"] == [list(p[:2]) for p in PAIRS] and rec["skipped"] == {"causal_context_rewrite": 1}


def test_multiple_choice_options_reach_the_answer_and_the_fallback(tmp_path):
    options = ["Logging upstream", "A drought"]
    script = Script(first="A", fallback="A")
    rec = run(tmp_path, script, options=options)
    assert "A. Logging upstream" in script.prompts["grounded_answer"][0]
    assert "A. Logging upstream" in script.prompts["strict_rewrite"][0]
    assert rec["answer"] == "Logging upstream"


def test_without_an_llm_every_configured_step_is_counted():
    from hyperrag.llm.base import NoLLM

    rec = CausalGenerator(NoLLM(), GENERATION).run(QUESTION, PASSAGES, PAIRS)
    assert rec["answer"] == "" and not rec["checks_passed"]
    assert rec["skipped"] == {"causal_context_rewrite": 1, "grounded_answer": 1, "causal_entailment": 1,
                              "claim_extraction": 1}


@pytest.mark.parametrize("answer, expected", [
    ("Heavy logging in the valley brought severe soil erosion.", ["maintained", "not_addressed"]),
    ("Warsaw", ["not_addressed", "not_addressed"]),
])
def test_lexical_entailment(answer, expected):
    assert lexical_entailment(PAIRS, answer, 0.5) == expected


COVERS_FIRST = "Heavy logging in the Varden valley caused severe soil erosion."  # keeps pair 0, leaves out pair 1


def test_fallback_lists_every_covered_pair_to_keep_and_only_the_missing_ones_to_add(tmp_path):
    """Below τ the fallback prompt asks to keep what the answer covered and to add what it missed — never to drop
    a verified pair; the scripted regeneration that keeps both is accepted."""
    script = Script(first=COVERS_FIRST, fallback=GOOD)
    rec = run(tmp_path, script, tau=0.75)
    fallback = next(s for s in rec["steps"] if s["step"] == "fallback_generation")
    assert fallback["keep"] == ["heavy logging in the Varden valley causes severe soil erosion."]
    assert fallback["missing"] == ["Severe soil erosion silted up the Varden reservoir."]
    prompt = script.prompts["strict_rewrite"][0]
    assert section(prompt, "Relations to keep") == fallback["keep"]
    assert section(prompt, "Missing relations") == fallback["missing"]
    assert "Unsupported claims" not in prompt
    assert rec["s_causal_initial"] == 0.5 and rec["s_causal"] == 1.0 and rec["answer"] == GOOD
    assert rec["fallback_taken"] and not rec["fallback_rejected"]


def test_a_fallback_that_drops_a_covered_pair_is_rejected(tmp_path):
    """The scripted regeneration keeps the missing pair but loses the one the answer covered: the answer that
    covered it stays, so every pair the answer already covered is still covered after the fallback."""
    script = Script(first=COVERS_FIRST, fallback="Severe soil erosion silted the Varden reservoir.")
    rec = run(tmp_path, script, tau=0.75, hallucination_check=False)
    assert rec["fallback_taken"] and rec["fallback_rejected"]
    assert rec["answer"] == COVERS_FIRST and rec["s_causal"] == rec["s_causal_initial"] == 0.5
    after = [s for s in rec["steps"] if s["step"] == "causal_check"][-1]
    assert after["rejected"] and after["dropped"] == [list(PAIRS[0][:2])]
    kept = {tuple(v["pair"]) for v in rec["steps"][2]["verdicts"] if v["verdict"] == "maintained"}
    assert all(maintained(f"{c} {e}", rec["answer"]) for c, e in kept)


def test_scope_is_the_pairs_the_answer_is_about(tmp_path):
    """``check_scope: answer``: an answer citing only the passage of the erosion → silting pair (shown as P2, after the causal context) and stating it is
    checked on that pair alone (S_causal 1, no fallback); ``all`` checks every retrieved pair (0.5, fallback)."""
    answer = "Severe soil erosion silted the Varden reservoir."
    about = run(tmp_path / "a", Script(first=answer, cite=("P2",)), rewrite_context=False, tau=0.75)
    check = about["steps"][1]
    assert about["steps"][0]["supporting"] == ["c01"]
    assert [v["pair"] for v in check["verdicts"]] == [list(PAIRS[1][:2])] and check["scope"] == "answer"
    assert about["s_causal"] == 1.0 and about["checked_pairs"] == 1 and not about["fallback_taken"]
    every = run(tmp_path / "b", Script(first=answer, cite=("P2",)), rewrite_context=False, tau=0.75,
                check_scope="all")
    assert every["s_causal_initial"] == 0.5 and every["checked_pairs"] == 2 and every["fallback_taken"]


def test_an_answer_ignoring_every_pair_fails_the_causal_check(tmp_path):
    """An answer about none of a non-empty C_graph's pairs (cites no pair's passage, states none) fails S_causal
    (0, not undefined): the fallback fires. Only |C_graph| = 0 leaves S_causal undefined."""
    none = run(tmp_path / "c", Script(first="bananas", fallback="bananas", cite=()), rewrite_context=False,
               hallucination_check=False)
    first = next(s for s in none["steps"] if s["step"] == "causal_check")
    assert first["verdicts"] == [] and first["score"] == 0.0  # an empty scope over a non-empty C_graph
    assert none["s_causal_initial"] == 0.0 and none["fallback_taken"]
    fixed = run(tmp_path / "d", Script(first="bananas", fallback=GOOD, cite=()), rewrite_context=False,
                hallucination_check=False)
    assert fixed["s_causal_initial"] == 0.0 and fixed["s_causal"] == 1.0 and fixed["checks_passed"]


def test_explanatory_style_reaches_the_answer_and_the_fallback(tmp_path):
    """answer_style=explanatory: the answer and the fallback are asked for an explanation plus the short answer;
    the record keeps both."""
    script = Script(first=COVERS_FIRST, fallback=GOOD, short="the silting of the reservoir")
    with FakeOpenAIServer(responder=script) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        rec = CausalGenerator(llm, replace(GENERATION, tau=0.75, hallucination_check=False),
                              style="explanatory").run(QUESTION, PASSAGES, PAIRS)
    for task in ("grounded_answer", "strict_rewrite"):
        assert '"short_answer"' in script.prompts[task][0]
    assert rec["answer"] == GOOD and rec["short_answer"] == "the silting of the reservoir"
    assert rec["steps"][1]["short_answer"] == "the silting of the reservoir"
