"""The CDF-RAG feedback loop against the scripted fake server (a test double): the strict-regeneration
fallback (low causal consistency) and the hallucination rewrite are provably taken — or not — by the script."""

import json
import re
from collections import Counter
from dataclasses import replace

from hyperrag.causal.generation import CausalGenerator
from hyperrag.config import method_settings
from tests.causal.llm_double import fake_llm, task_of, user_text
from tests.llm.fake_server import FakeOpenAIServer

GENERATION = method_settings("cdfrag").generation

QUESTION = "Why did the town of Varden lose its drinking water supply?"
PASSAGES = [("c01", "Severe soil erosion caused the silting of the Varden reservoir."),
            ("c00", "Heavy logging in the Varden valley led to severe soil erosion.")]
PAIRS = [("heavy logging in the Varden valley", "severe soil erosion", "c00"),
         ("severe soil erosion", "the silting of the Varden reservoir", "c01")]


def item_id(prompt: str, needle: str) -> str:
    """The short ID (P1...) of the shown item whose text contains ``needle``."""
    for pid, text in re.findall(r'<passage id="(P\d+)">\n(.*?)\n</passage>', prompt, re.DOTALL):
        if needle in text:
            return pid
    raise AssertionError(f"{needle!r} not shown")


class Script:
    """Replies per task; ``reverse_links``: the rewrite states every pair backwards; ``refute_first``: claims of
    the first answer are refuted, the rewritten answer's supported; ``always_refute``: nothing is supported."""

    def __init__(self, reverse_links: bool, refute_first: bool, always_refute: bool = False) -> None:
        self.reverse_links, self.refute_first, self.always_refute = reverse_links, refute_first, always_refute
        self.calls: Counter = Counter()

    def __call__(self, body: dict) -> str:
        task, prompt = task_of(body), user_text(body)
        self.calls[task] += 1
        if task == "causal_context_rewrite":
            links = [{"cause": e, "effect": c} if self.reverse_links else {"cause": c, "effect": e}
                     for c, e, _ in PAIRS]
            return json.dumps({"summary": "Logging eroded the soil, which silted the reservoir.", "causal_links": links})
        if task == "grounded_answer":
            return json.dumps({"answer": "draft: the reservoir silted", "supporting_ids": ["P1"]})
        if task == "strict_rewrite":
            if "Unsupported claims" in prompt and "causes" in prompt.split("Unsupported claims")[1]:
                # causal fallback: answer from the verbatim pairs, citing both
                ids = [item_id(prompt, "severe soil erosion causes the silting"),
                       item_id(prompt, "heavy logging in the Varden valley causes")]
                return json.dumps({"answer": "strict: the reservoir silted", "supporting_ids": ids})
            return json.dumps({"answer": "final: the reservoir silted after logging", "supporting_ids": ["P1"]})
        if task == "claim_extraction":
            text = re.search(r"Text:\n<data>\n(.*?)\n</data>", prompt, re.DOTALL).group(1)
            return json.dumps({"claims": [f"claim A of {text}", f"claim B of {text}"]})
        if task == "claim_support":
            refute = self.always_refute or (self.refute_first and "final:" not in prompt)
            return json.dumps({"verdict": "refuted" if refute else "supported", "evidence_ids": ["P1"], "reason": ""})
        raise AssertionError(f"unexpected request {task}")


def run(tmp_path, script: Script, **kw) -> dict:
    with FakeOpenAIServer(responder=script) as server, fake_llm(server, tmp_path) as llm:
        rec = CausalGenerator(llm, replace(GENERATION, **kw)).run(QUESTION, PASSAGES, PAIRS)
        assert server.stats["requests"] == sum(script.calls.values())
    return rec


def test_low_consistency_falls_back_and_high_hallucination_rewrites(tmp_path):
    script = Script(reverse_links=True, refute_first=True)
    rec = run(tmp_path, script, tau=0.5, delta=0.3, max_rounds=2)
    steps = [s["step"] for s in rec["steps"]]
    assert steps == ["rewrite_context", "answer", "causal_consistency", "strict_regeneration", "claim_check",
                     "rewrite", "claim_check"]
    consistency = rec["steps"][2]
    assert consistency["score"] == 0.0 and len(consistency["contradicted"]) == 2  # stated backwards
    assert rec["fallback_taken"] and rec["consistency_initial"] == 0.0
    strict = rec["steps"][3]
    assert strict["reason"] == "causal consistency below tau" and strict["answer"] == "strict: the reservoir silted"
    assert sorted(strict["supporting"]) == ["pair:0", "pair:1"]
    assert rec["consistency_final"] == 1.0  # the regenerated answer rests on the verbatim pairs
    first_check, rewrite, second_check = rec["steps"][4:]
    assert first_check["hallucination"] == 1.0 and all(c["verdict"] == "refuted" for c in first_check["claims"])
    assert rewrite["reason"] == "hallucination above delta" and len(rewrite["unsupported_claims"]) == 2
    assert second_check["hallucination"] == 0.0
    assert rec["answer"] == "final: the reservoir silted after logging" and rec["rewrites"] == 1
    assert rec["hallucination_initial"] == 1.0 and rec["hallucination"] == 0.0
    assert script.calls == {"causal_context_rewrite": 1, "grounded_answer": 1, "strict_rewrite": 2,
                            "claim_extraction": 2, "claim_support": 4}


def test_consistent_and_supported_answer_takes_no_branch(tmp_path):
    script = Script(reverse_links=False, refute_first=False)
    rec = run(tmp_path, script)
    assert [s["step"] for s in rec["steps"]] == ["rewrite_context", "answer", "causal_consistency", "claim_check"]
    assert rec["consistency_initial"] == rec["consistency_final"] == 1.0 and not rec["fallback_taken"]
    assert rec["hallucination"] == 0.0 and rec["rewrites"] == 0
    assert rec["answer"] == "draft: the reservoir silted" and "strict_rewrite" not in script.calls


def test_rewrites_are_bounded(tmp_path):
    script = Script(reverse_links=False, refute_first=False, always_refute=True)
    rec = run(tmp_path, script, max_rounds=2)
    checks = [s for s in rec["steps"] if s["step"] == "claim_check"]
    assert len(checks) == 3 and rec["rewrites"] == 2 and rec["hallucination"] == 1.0
    assert script.calls["strict_rewrite"] == 2


def test_failed_rewrite_falls_back_to_verbatim_pairs(tmp_path):
    def broken_rewrite(body: dict) -> str:
        if task_of(body) == "causal_context_rewrite":
            return "not json at all"
        return Script(reverse_links=False, refute_first=False)(body)

    with FakeOpenAIServer(responder=broken_rewrite) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        rec = CausalGenerator(llm, GENERATION).run(QUESTION, PASSAGES, PAIRS)
    first = rec["steps"][0]
    assert first["step"] == "rewrite_context" and first["ok"] is False and first["fallback"] == "verbatim pairs"
    assert rec["context"]["links"] == [list(p[:2]) for p in PAIRS]
    assert rec["consistency_initial"] == 1.0 and not rec["fallback_taken"]
