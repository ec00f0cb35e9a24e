from typing import ClassVar

import lightning as L
import pytest
import torch

from hyperrag.refinement.datamodule import RolloutDataModule
from hyperrag.refinement.env import RefinementEnv, split_queries
from hyperrag.refinement.ppo import PPOPolicy


class BanditEnv:
    """A contextual bandit with the environment's interface: the best action depends on the state's first
    coordinate (expand when > 0, decompose otherwise); simplify is always mediocre."""

    actions: ClassVar[list[str]] = ["expand", "simplify", "decompose"]
    evaluate_policy = RefinementEnv.evaluate_policy
    reward_table = RefinementEnv.reward_table

    def __init__(self, n: int = 60, dim: int = 8, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.states = torch.nn.functional.normalize(torch.randn(n, dim, generator=g), dim=1)
        self.calls = 0

    def rewards(self, ids, actions):
        self.calls += len(ids)
        out = []
        for i, a in zip(ids, actions):
            pos = bool(self.states[i, 0] > 0)
            out.append({"expand": 1.0 if pos else 0.0, "simplify": 0.4, "decompose": 0.0 if pos else 1.0}[a])
        return out


def test_ppo_loss_clips_the_ratio():
    policy = PPOPolicy(state_dim=4, hidden=8, clip=0.2, value_coef=0.0, entropy_coef=0.0)
    states = torch.randn(5, 4)
    actions = torch.zeros(5, dtype=torch.long)
    with torch.no_grad():
        logits, _ = policy(states)
        logp = torch.log_softmax(logits, -1)[:, 0]
    adv = torch.ones(5)
    # old policy much less likely (ratio e^1 > 1 + clip): positive advantage is clipped at 1 + clip
    loss, stats = policy.ppo_loss(states, actions, logp - 1.0, adv, torch.zeros(5))
    assert loss.item() == pytest.approx(-1.2, abs=1e-5) and stats["clip_frac"].item() == 1.0
    loss, stats = policy.ppo_loss(states, actions, logp, adv, torch.zeros(5))  # ratio 1: unclipped
    assert loss.item() == pytest.approx(-1.0, abs=1e-5) and stats["clip_frac"].item() == 0.0
    assert stats["entropy"].item() == pytest.approx(torch.log(torch.tensor(3.0)).item(), abs=1e-5)  # uniform start


@pytest.mark.slow
def test_ppo_learns_a_contextual_bandit_and_beats_random():
    L.seed_everything(0, verbose=False)
    env = BanditEnv()
    train, held = list(range(40)), list(range(40, 60))
    policy = PPOPolicy(state_dim=8, hidden=16, lr=0.02, rollouts_per_state=2, seed=0).attach(env, train, held)
    before = env.evaluate_policy(policy, held)
    trainer = L.Trainer(max_epochs=40, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, accelerator="cpu")
    trainer.fit(policy, datamodule=RolloutDataModule(train, seed=0))
    after = env.evaluate_policy(policy, held)
    assert after["random_reward"] == pytest.approx(before["random_reward"])
    assert after["policy_reward"] > 0.9 > after["random_reward"] + 0.3
    assert len(policy.history) == 40 and policy.history[-1]["entropy"] < policy.history[0]["entropy"]
    assert policy.history[-1]["val_reward"] == pytest.approx(after["policy_reward"])
    assert {"reward", "policy_loss", "value_loss", "approx_kl", "clip_frac", "share_expand"} <= set(policy.history[0])


def test_split_queries():
    from hyperrag.data.types import Query

    qs = [Query(str(i), "q", (), ("p",) if i != 3 else ()) for i in range(10)]
    train, held = split_queries(qs, 5, 3, seed=0)
    assert len(train) == 5 and len(held) == 3 and not set(train) & set(held) and 3 not in train + held
    assert split_queries(qs, 5, 3, seed=0) == (train, held) != split_queries(qs, 5, 3, seed=1)
    train, held = split_queries(qs, 0.5, None, seed=0)
    assert len(train) == round(0.5 * 9) and len(train) + len(held) == 9
