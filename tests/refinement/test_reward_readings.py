"""Issue 39's reward readings, on the causal toy corpus with the real dual-path retrieval: A.3's relevance is the
*gain* of the knowledge set's match with the question over the unrefined question's (so not refining is not the
maximum by construction), §2.2's reward is the second reading, an unchanged rewrite is masked, and an abstention
earns no λ4 credit while an infrastructure failure is recorded and left out."""

import dataclasses

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.llm.base import NoLLM
from hyperrag.refinement.actions import Refinement
from hyperrag.refinement.env import reward_hallucination
from hyperrag.refinement.ppo import PPOPolicy
from hyperrag.retrievers.cdfrag import CDFRAGRetriever
from tests.causal.corpus import PASSAGES, causal_dataset
from tests.refinement.conftest import make_env


def make_retriever(tmp, encoder, llm, **overrides):
    settings = method_settings("cdfrag", policy=None, classifier=None, index_root=str(tmp / "idx"),
                               models_dir=str(tmp / "models"))
    settings = dataclasses.replace(settings, causal_retrieval=False, semantic_k=2,
                                   generation=dataclasses.replace(settings.generation, enabled=False), **overrides)
    r = CDFRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
    r.index(causal_dataset(tmp))
    return r


@pytest.fixture(scope="module")
def oracle_retriever(tmp_path_factory, encoder):
    from hyperrag.llm.oracle import OracleLLM

    tmp = tmp_path_factory.mktemp("gain")
    llm = OracleLLM(refinement="gold_answers", cache_path=str(tmp / "oracle.sqlite"), show_usage=False)
    llm.bind_gold(causal_dataset(tmp))
    llm.start()
    yield make_retriever(tmp, encoder, llm)
    llm.stop()


@pytest.fixture(scope="module")
def free_retriever(tmp_path_factory, encoder):
    return make_retriever(tmp_path_factory.mktemp("free"), encoder, NoLLM())


def gold_refinement(question: str, gold: tuple[str, ...]) -> Refinement:
    """A refinement whose queries are the gold passages' own texts (it retrieves them)."""
    text = {pid: body for pid, _, body in PASSAGES}
    queries = [text[g] for g in gold]
    return Refinement("expand", queries, queries, "llm", ["expand"], queries, question)


def test_unrefined_relevance_is_not_the_maximum_a_refinement_retrieving_the_gold_scores_higher(oracle_retriever):
    queries = list(causal_dataset().queries)
    env = make_env(oracle_retriever, queries, k=2)  # a3, relevance gain, match auto → the judge
    assert (env.reward, env.relevance, env.match) == ("a3", "gain", "judge")
    q0 = queries[0]  # two gold passages (c01, c00)
    env._refinements[(0, ("expand",))] = gold_refinement(q0.question, q0.gold_ids)  # the refinement under test
    base, refined = env.outcomes([0, 0], [(), ("expand",)])
    assert base["relevance"] == 0.5 and base["match_gain"] == 0.0  # no refinement: no gain, by definition
    assert set(q0.gold_ids) <= {oracle_retriever.passage_ids[j] for j in range(12)} and refined["match"] == 1.0
    assert base["match"] < 1.0  # the question's own K lacks a gold passage
    assert refined["relevance"] > base["relevance"] and refined["match_gain"] > 0
    # the old reading (the retriever's cosine to the unrefined question's own top-k) ranks them the other way
    old = make_env(oracle_retriever, queries, k=2, relevance="context")
    old._refinements[(0, ("expand",))] = env._refinements[(0, ("expand",))]
    b, r = old.outcomes([0, 0], [(), ("expand",)])
    assert b["relevance"] >= r["relevance"]


def test_lexical_match_is_the_idf_weighted_share_of_question_words_k_holds(free_retriever):
    queries = list(causal_dataset().queries)
    env = make_env(free_retriever, queries, k=2)
    assert env.match == "lexical"
    text = {pid: body for pid, _, body in PASSAGES}
    q = "Why was the coastal road near Maren closed?"
    assert env.lexical_match(q, [text["c06"]]) > env.lexical_match(q, [text["c07"]]) > 0.0
    assert env.lexical_match(q, []) == 0.0
    assert env.outcomes([1], [()])[0]["relevance"] == 0.5


def test_s22_reward_is_coverage_depth_context_relevance_and_hallucination(free_retriever):
    queries = list(causal_dataset().queries)
    env = make_env(free_retriever, queries, k=2, reward="s22")
    o = env.outcomes([0], [("expand",)])[0]
    w = env.weights
    assert o["relevance"] == o["coverage"] is not None
    assert o["reward"] == pytest.approx(w.relevance * o["coverage"] + w.causal_depth * o["causal_depth"]
                                        + w.similarity * o["knowledge_relevance"] + w.hallucination)
    with pytest.raises(ValueError, match="reward"):
        make_env(free_retriever, queries, reward="s23")


def test_an_unchanged_rewrite_is_masked(free_retriever):
    """A step that leaves the query set as it was is not a distinct action: masked for the policy, the random
    baseline and the per-question best."""
    queries = list(causal_dataset().queries)
    env = make_env(free_retriever, queries, k=2)
    i = 5  # "When was the town of Varden founded?": no clause to split — decompose rewrites nothing
    assert env.refinements([i], [("decompose",)])[0].queries == [queries[i].question]
    valid = env.valid_actions([i], [()])[0].tolist()
    assert dict(zip(env.actions, valid)) == {"expand": True, "simplify": True, "decompose": False}
    assert ("decompose",) not in env.valid_sequences(i)
    policy = PPOPolicy(state_dim=384, hidden=8, layers=1, lr=1e-3, weight_decay=0.0, clip=0.2, value_coef=0.5,
                       entropy_coef=0.0, ppo_epochs=1, minibatch_size=4, rollouts_per_state=1,
                       normalize_advantage=True, dropout=0.0, seed=0, max_iterations=1, max_steps=1)
    with torch.no_grad():  # a policy that prefers decompose above all
        policy.net.policy.bias.copy_(torch.tensor([0.0, 0.0, 10.0, 0.0]))
    assert env.greedy_sequences(policy, [i]) == [("expand",)] or env.greedy_sequences(policy, [i]) == [("simplify",)]
    probs = policy.probabilities(env.states([i], [()]), valid=env.valid_actions([i], [()]))
    assert probs[0, 2] == 0.0 and probs[0, 3] == 0.0  # decompose masked; stop not allowed at the first step
    unmasked = make_env(free_retriever, queries, k=2, mask_unchanged=False)
    assert bool(unmasked.valid_actions([i], [()]).all())


def rec(answer, steps, hallucination=None, skipped=None):
    return {"answer": answer, "steps": steps, "hallucination": hallucination, "skipped": skipped or {}}


def test_abstention_or_a_failed_claim_check_earns_no_hallucination_credit():
    ok = {"step": "claim_check", "ok": True, "claims": [{"claim": "x"}], "hallucination": 0.25}
    assert reward_hallucination(rec("Paris", [ok], 0.25)) == (0.25, "scored")
    assert reward_hallucination(rec("unknown", [ok], 0.0)) == (1.0, "abstained")
    assert reward_hallucination(rec("", [], None)) == (1.0, "abstained")
    no_claims = {"step": "claim_check", "ok": True, "claims": [], "hallucination": 0.0}
    assert reward_hallucination(rec("Paris", [no_claims], 0.0)) == (1.0, "no_claims")
    parse = {"step": "claim_check", "ok": False, "error": "invalid_output"}
    assert reward_hallucination(rec("Paris", [parse])) == (1.0, "check_failed")
    transport = {"step": "claim_check", "ok": False, "error": "timeout"}
    assert reward_hallucination(rec("Paris", [transport])) == (None, "infra_failure")
    assert reward_hallucination(None) == (None, "not_generated")
