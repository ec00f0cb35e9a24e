
import lightning as L
import pytest
import torch

from hyperrag.config import task_arguments
from hyperrag.refinement.datamodule import RolloutDataModule
from hyperrag.refinement.env import RefinementEnv, split_queries
from hyperrag.refinement.ppo import PPOPolicy


class ChainEnv(RefinementEnv):
    """A toy MDP with the environment's interface (episodes of up to two actions): the best first action depends on
    the state's first coordinate (expand when > 0, decompose otherwise), and a following ``simplify`` adds 0.3 to
    the right first action while any other second action costs 0.1; simplify first is always mediocre."""

    def __init__(self, n: int = 60, dim: int = 8, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.base = torch.nn.functional.normalize(torch.randn(n, dim, generator=g), dim=1)
        self.base[:, 4:] = 0.0
        self.actions, self.max_steps, self.calls = ["expand", "simplify", "decompose"], 2, 0
        self.mask_unchanged = False  # a toy: every action changes the state

    def states(self, ids, seqs):
        out = []
        for i, seq in zip(ids, seqs):
            s = self.base[i].clone()
            if seq:
                s[4 + self.actions.index(seq[-1])] = 2.0
            out.append(torch.nn.functional.normalize(s, dim=0))
        return torch.stack(out)

    def reward(self, i: int, seq: tuple) -> float:
        if not seq:
            return 0.2
        pos = bool(self.base[i, 0] > 0)
        first = {"expand": 1.0 if pos else 0.0, "simplify": 0.4, "decompose": 0.0 if pos else 1.0}[seq[0]]
        if len(seq) == 1:
            return first
        return first + (0.3 if seq[1] == "simplify" and first == 1.0 else -0.1)

    def outcomes(self, ids, seqs):
        self.calls += len(ids)
        seqs = [(s,) if isinstance(s, str) else tuple(s) for s in seqs]
        return [{"reward": self.reward(i, s), "coverage": float(self.reward(i, s) >= 1.0)} for i, s in zip(ids, seqs)]


def test_ppo_loss_clips_the_ratio():
    policy = PPOPolicy(**task_arguments("ppo", state_dim=4, hidden=8, clip=0.2, value_coef=0.0, entropy_coef=0.0,
                                        max_steps=1))
    states = torch.randn(5, 4)
    actions = torch.zeros(5, dtype=torch.long)
    no_stop = torch.zeros(5, dtype=torch.bool)
    with torch.no_grad():
        logits, _ = policy(states)
        logp = torch.log_softmax(policy.masked(logits, no_stop), -1)[:, 0]
    adv = torch.ones(5)
    # old policy much less likely (ratio e^1 > 1 + clip): positive advantage is clipped at 1 + clip
    loss, stats = policy.ppo_loss(states, actions, logp - 1.0, adv, torch.zeros(5), no_stop)
    assert loss.item() == pytest.approx(-1.2, abs=1e-5) and stats["clip_frac"].item() == 1.0
    loss, stats = policy.ppo_loss(states, actions, logp, adv, torch.zeros(5), no_stop)  # ratio 1: unclipped
    assert loss.item() == pytest.approx(-1.0, abs=1e-5) and stats["clip_frac"].item() == 0.0
    # uniform start over the three refinement actions: stop is masked at the first step
    assert stats["entropy"].item() == pytest.approx(torch.log(torch.tensor(3.0)).item(), abs=1e-5)
    assert policy.probabilities(states, allow_stop=False)[:, -1].max() == 0.0
    assert policy.probabilities(states, allow_stop=True)[0].tolist() == pytest.approx([0.25] * 4)


@pytest.mark.slow  # ~2-3 min on two shared cores: the paper's network, 5 episodes per state, 100 iterations
def test_ppo_learns_to_chain_actions_and_beats_random():
    """The labelled chain option (``max_refine_steps: 2``) with task/ppo.yaml's own policy settings, unchanged: the
    paper's network (separate two-layer policy and value MLPs of width 256, lr 3e-4, entropy 0.01, batch 64) and
    A.3's budget (5 episodes per question × 100 iterations). The right first action depends on the state, and only a
    chained ``simplify`` earns more than 1.0 — the most any one action earns — so a held-out reward above 1.0 is a
    learned chain. (The > 1.2 this test once asked for was reached by the earlier shared-trunk network with a
    smaller net and a faster rate; with the paper's separate networks the first action is right on ~18 of 20
    held-out states, reward ~1.1 of the hindsight 1.3.)"""
    L.seed_everything(0, verbose=False)
    env = ChainEnv()
    train, held = list(range(40)), list(range(40, 60))
    policy = PPOPolicy(**task_arguments("ppo", state_dim=8, seed=0, max_steps=2)).attach(env, train, held)
    iterations = int(policy.hparams.max_iterations)
    before = env.evaluate_policy(policy, held, select_ids=train)
    trainer = L.Trainer(max_epochs=iterations, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, accelerator="cpu")
    trainer.fit(policy, datamodule=RolloutDataModule(train, seed=0))
    after = env.evaluate_policy(policy, held, select_ids=train)
    assert after["random_reward"] == pytest.approx(before["random_reward"])
    # chained episodes beat the best one action can earn (1.0), the best fixed action and the random policy by far
    assert after["policy_reward"] > 1.0 > after["best_fixed_reward"] + 0.5 and after["random_reward"] < 0.8
    assert after["policy_episode_length"] > 1.8
    best = sum(n for seq, n in after["policy_sequences"].items() if seq in ("expand+simplify", "decompose+simplify"))
    assert best >= 0.8 * len(held)
    assert len(policy.history) == iterations and policy.history[-1]["entropy"] < policy.history[0]["entropy"]
    assert policy.history[-1]["val_reward"] == pytest.approx(after["policy_reward"])
    assert {"reward", "policy_loss", "value_loss", "approx_kl", "clip_frac", "share_stop",
            "episode_length"} <= set(policy.history[0])


def test_split_queries():
    from hyperrag.data.types import Query

    qs = [Query(str(i), "q", (), ("p",) if i != 3 else ()) for i in range(10)]
    train, held = split_queries(qs, 5, 3, seed=0, need_gold=True)  # the labelled reward: gold needed
    assert len(train) == 5 and len(held) == 3 and not set(train) & set(held) and 3 not in train + held
    assert split_queries(qs, 5, 3, seed=0, need_gold=True) == (train, held) != split_queries(qs, 5, 3, seed=1,
                                                                                             need_gold=True)
    train, held = split_queries(qs, 0.5, None, seed=0, need_gold=True)
    assert len(train) == round(0.5 * 9) and len(train) + len(held) == 9
    train, held = split_queries(qs, 0.5, None, seed=0)  # the label-free reward trains on every question
    assert len(train) + len(held) == 10 and 3 in train + held
