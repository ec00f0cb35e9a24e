"""Issue 46: the reward's agreement with the retrieval objective, the readings that re-score the same retrievals
(``derive``: ``match_scope``, λs, a restricted action set), the λs tuned on given questions only, and PPO over a
restricted action set — on the causal toy corpus with the real dual-path retrieval."""

import pytest
import torch

from hyperrag.refinement.agreement import (
    best_action_subset,
    best_by_reward,
    pairwise_concordance,
    reward_agreement,
    tune_weights,
    weight_grid,
)
from hyperrag.refinement.env import RewardWeights
from hyperrag.refinement.ppo import STOP, PPOPolicy
from tests.causal.corpus import causal_dataset
from tests.refinement.conftest import make_env
from tests.refinement.test_reward_readings import free_retriever, oracle_retriever  # noqa: F401  (fixtures)


def outcome(fcr, reward, r=0.5):
    return {"full_chain": fcr, "reward": reward, "terms": {"r": r, "d": 0.0, "s": 1.0, "h": None}}


def test_best_by_reward_and_concordance_on_hand_made_outcomes():
    pool = [((), outcome(0.0, 0.9)), (("expand",), outcome(0.0, 0.8)), (("decompose",), outcome(1.0, 0.7)),
            (("simplify",), outcome(0.0, 0.7))]
    # the reward's best refinement is expand (the unrefined question is not a choice when a refinement is valid)
    assert best_by_reward(pool, "full_chain") == 0.0
    # a tie between decompose and simplify: the mean of their metric
    assert best_by_reward(pool, "full_chain", [0.9, 0.1, 0.7, 0.7]) == pytest.approx(0.5)
    # pairs whose metric differs: (expand, decompose) discordant, (decompose, simplify) a reward tie -> ½
    hit, n = pairwise_concordance(pool, "full_chain")
    assert (hit, n) == (0.5, 2)
    hit, n = pairwise_concordance(pool, "full_chain", [0.0, 0.1, 0.9, 0.2])
    assert (hit, n) == (2.0, 2)
    assert best_by_reward(pool[:1], "full_chain") == 0.0  # nothing valid: the unrefined question


def test_derive_rescores_the_same_retrievals_and_set_weights_recombines(oracle_retriever):  # noqa: F811
    queries = list(causal_dataset().queries)
    env = make_env(oracle_retriever, queries, k=2)
    ids = list(range(4))
    env.reward_table(ids)
    calls = env.env_calls
    o = env.outcomes([0], [("expand",)])[0]
    assert o["reward"] == pytest.approx(env.combine(o["terms"]))
    top = env.derive(match_scope="top_k")
    assert top.env_calls == calls and env.env_calls == calls  # nothing retrieved again
    t = top.outcomes([0], [("expand",)])[0]
    assert t["coverage"] == o["coverage"] and t["full_chain"] == o["full_chain"]  # the same retrieval
    # the oracle judge's m over the top k is the gold share of the top k: recall@k
    assert t["match"] == pytest.approx(round(t["coverage"], 1))
    w = RewardWeights(1.0, 0.0, 0.0, 0.0)
    env.set_weights(w)
    assert env.outcomes([0], [("expand",)])[0]["reward"] == pytest.approx(o["terms"]["r"])
    assert top.weights == RewardWeights()  # a derived reading keeps its own λs
    s22 = env.derive(reward="s22")
    assert s22.outcomes([0], [("expand",)])[0]["relevance"] == o["coverage"]
    with pytest.raises(ValueError, match="match_scope"):
        env.derive(match_scope="everything")
    with pytest.raises(ValueError, match="actions"):
        env.derive(actions=["expand", "rewrite"])


def test_agreement_tuning_and_action_subset(oracle_retriever):  # noqa: F811
    queries = list(causal_dataset().queries)
    env = make_env(oracle_retriever, queries, k=2)
    ids = [i for i, q in enumerate(queries) if q.gold_ids]
    a = reward_agreement(env, ids, boot=50)
    assert a["questions"] == len(ids) and a["pairs"] == sum(len(env.valid_sequences(i)) for i in ids)
    assert a["reward_best_metric"] <= a["ceiling_metric"]
    w, info = tune_weights(env, ids)
    assert info["candidates"] == len(weight_grid())
    # the tuned λs agree with ΔFCR at least as well as the defaults, on the questions they were chosen on
    assert info["spearman"] >= info["paper_spearman"]
    tuned = reward_agreement(env, ids, weights=w, boot=0)
    assert tuned["reward_best_metric"] == info["metric_of_reward_best"]
    assert tuned["spearman"] == pytest.approx(info["spearman"], abs=1e-3)
    sub, scores = best_action_subset(env, ids, 2)
    assert len(sub) == 2 and scores["+".join(sub)] == max(scores.values())


def test_ppo_over_a_restricted_action_set(free_retriever):  # noqa: F811
    queries = list(causal_dataset().queries)
    env = make_env(free_retriever, queries, k=2).derive(actions=["decompose", "expand"])
    assert env.actions == ["expand", "decompose"]  # the method's order
    assert env.sequences() == [("expand",), ("decompose",)]
    policy = PPOPolicy(state_dim=384, hidden=8, layers=1, lr=1e-3, weight_decay=0.0, clip=0.2, value_coef=0.5,
                       entropy_coef=0.0, ppo_epochs=1, minibatch_size=4, rollouts_per_state=2,
                       normalize_advantage=True, dropout=0.0, seed=0, max_iterations=1, max_steps=1,
                       actions=("expand", "decompose", STOP))
    policy.attach(env, [0, 1, 2], [])
    buf = policy.rollout([0, 1, 2])
    assert buf is not None and buf["valid"].shape[1] == 2
    with torch.no_grad():
        policy.net.policy.bias.copy_(torch.tensor([0.0, 10.0, 0.0]))
    seqs = env.greedy_sequences(policy, [0, 5])
    assert all(s in ((), ("expand",), ("decompose",)) for s in seqs)
    assert seqs[1] == ("expand",)  # question 5: decompose changes nothing, so the policy's favourite is masked
