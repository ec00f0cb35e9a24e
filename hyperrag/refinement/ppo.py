"""PPO for the query-refinement policy, as a LightningModule with manual optimisation.

The problem is a contextual bandit: state ``s`` = the question's sentence embedding, action ``a`` ∈
{expand, simplify, decompose}, one step per episode, reward ``r`` from :class:`~hyperrag.refinement.env.RefinementEnv`.
With one-step episodes the return is ``r`` and the advantage is ``A = r − V(s)`` (GAE with λ = 1 collapses to
this), normalised over the rollout.

One training step = one PPO iteration:
  1. rollout — sample ``a ~ π_old(·|s)`` for every question of the batch (``rollouts_per_state`` times),
     record ``log π_old(a|s)``, ``V_old(s)`` and query the environment for ``r``;
  2. ``ppo_epochs`` passes over shuffled minibatches minimising
     ``−min(ρA, clip(ρ, 1−ε, 1+ε)A) + c_v (V(s) − r)² − c_e H(π(·|s))`` with ``ρ = π(a|s) / π_old(a|s)``.
Logged: mean reward, policy/value loss, entropy, approximate KL, clip fraction, action shares; at each epoch end
the greedy policy's and the uniform-random policy's mean reward on the held-out questions. The history is
kept in the checkpoint (``history``) for the training-curve plot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import lightning as L
import torch
from torch import nn
from torch.distributions import Categorical

from hyperrag.config.validation import NonNegativeFloat, PositiveFloat, PositiveInt, Probability, as_dict
from hyperrag.refinement.actions import ACTIONS
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder
    from hyperrag.retrievers.settings import CDFRAGSettings


class ActorCritic(nn.Module):
    """Shared MLP trunk (input dropout, linear, tanh), a policy head (action logits) and a value head."""

    def __init__(self, state_dim: int, hidden: int, n_actions: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Dropout(dropout), nn.Linear(state_dim, hidden), nn.Tanh())
        self.policy = nn.Linear(hidden, n_actions)
        self.value = nn.Linear(hidden, 1)
        nn.init.zeros_(self.policy.weight)  # start uniform
        nn.init.zeros_(self.policy.bias)

    def forward(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(states)
        return self.policy(h), self.value(h).squeeze(-1)


class PPOPolicy(L.LightningModule):
    """Args:
        state_dim: width of the state (the sentence-embedding dimension).
        hidden: trunk width.
        actions: action names (index order of the logits).
        lr: Adam learning rate; ``weight_decay`` its L2 penalty.
        clip: PPO's ε.
        value_coef / entropy_coef: c_v and c_e.
        ppo_epochs: optimisation passes per rollout; ``minibatch_size`` samples per update.
        rollouts_per_state: actions sampled per question per iteration.
        normalize_advantage: standardise advantages over the rollout.
        seed: sampling of rollout actions.
        max_iterations: stop after this many PPO iterations (``trainer.should_stop``) whatever
            ``trainer.max_epochs`` says — with a few dozen training questions, long training memorises them
            (held-out reward falls); ``None`` = the Trainer decides.
    """

    def __init__(self, state_dim: PositiveInt = 384, hidden: PositiveInt = 64,
                 actions: tuple[str, ...] | list[str] = ACTIONS, lr: PositiveFloat = 3e-3,
                 weight_decay: NonNegativeFloat = 1e-4, clip: PositiveFloat = 0.2,
                 value_coef: NonNegativeFloat = 0.5, entropy_coef: NonNegativeFloat = 0.01,
                 ppo_epochs: PositiveInt = 4, minibatch_size: PositiveInt = 32,
                 rollouts_per_state: PositiveInt = 2, normalize_advantage: bool = True, dropout: Probability = 0.0, seed: int = 0,
                 max_iterations: PositiveInt | None = None) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.actions = list(actions)
        self.net = ActorCritic(state_dim, hidden, len(self.actions), dropout)
        self.automatic_optimization = False
        self.env: Any = None
        self.train_ids: list[int] = []
        self.val_ids: list[int] = []
        self.history: list[dict[str, float]] = []
        self._gen = torch.Generator().manual_seed(seed)

    # ---- wiring --------------------------------------------------------------------------------------
    def attach(self, env: Any, train_ids: list[int], val_ids: list[int]) -> PPOPolicy:
        """Bind the environment and the train / held-out question ids (not part of the checkpoint)."""
        self.env, self.train_ids, self.val_ids = env, list(train_ids), list(val_ids)
        return self

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["history"] = self.history

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.history = list(checkpoint.get("history", []))

    # ---- acting --------------------------------------------------------------------------------------
    def forward(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.net(states.to(self.device).float())

    @torch.no_grad()
    def probabilities(self, states: torch.Tensor) -> torch.Tensor:
        """π(·|s) [B, A] (dropout off: acting is deterministic given the state)."""
        was_training = self.net.training
        self.net.eval()
        logits, _ = self(states)
        self.net.train(was_training)
        return torch.softmax(logits, dim=-1).cpu()

    @torch.no_grad()
    def act(self, states: torch.Tensor, greedy: bool = True) -> list[str]:
        """Action names for states [B, D]: argmax (``greedy``) or sampled."""
        probs = self.probabilities(states)
        idx = probs.argmax(-1) if greedy else torch.multinomial(probs, 1, generator=self._gen).squeeze(-1)
        return [self.actions[i] for i in idx.tolist()]

    # ---- PPO -----------------------------------------------------------------------------------------
    def ppo_loss(self, states: torch.Tensor, actions: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                 returns: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Clipped surrogate + value loss − entropy bonus, and diagnostics."""
        h = self.hparams
        logits, values = self(states)
        dist = Categorical(logits=logits)
        logp = dist.log_prob(actions)
        ratio = torch.exp(logp - old_logp)
        surr = torch.minimum(ratio * advantages, ratio.clamp(1 - h.clip, 1 + h.clip) * advantages)
        policy_loss = -surr.mean()
        value_loss = (values - returns).pow(2).mean()
        entropy = dist.entropy().mean()
        loss = policy_loss + h.value_coef * value_loss - h.entropy_coef * entropy
        with torch.no_grad():
            stats = {"policy_loss": policy_loss.detach(), "value_loss": value_loss.detach(), "entropy": entropy.detach(),
                     "approx_kl": (old_logp - logp).mean(),
                     "clip_frac": ((ratio - 1).abs() > h.clip).float().mean()}
        return loss, stats

    def rollout(self, ids: list[int]) -> dict[str, torch.Tensor]:
        """Sample actions for ``ids`` (each ``rollouts_per_state`` times) and collect rewards."""
        reps = int(self.hparams.rollouts_per_state)
        ids_rep = [i for i in ids for _ in range(reps)]
        states = self.env.states[ids_rep]
        with torch.no_grad():
            was_training = self.net.training
            self.net.eval()  # π_old without dropout; dropout only regularises the updates
            logits, values = self(states)
            self.net.train(was_training)
            probs = torch.softmax(logits, -1).cpu()
            actions = torch.multinomial(probs, 1, generator=self._gen).squeeze(-1).to(self.device)
            old_logp = Categorical(logits=logits).log_prob(actions)
        rewards = torch.tensor(self.env.rewards(ids_rep, [self.actions[a] for a in actions.tolist()]),
                               dtype=torch.float32, device=self.device)
        adv = rewards - values
        if self.hparams.normalize_advantage and adv.numel() > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        return {"states": states.to(self.device).float(), "actions": actions, "old_logp": old_logp,
                "advantages": adv, "returns": rewards}

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> None:
        opt = self.optimizers()
        buf = self.rollout([int(i) for i in batch.tolist()])
        n = buf["actions"].numel()
        mb = max(1, min(int(self.hparams.minibatch_size), n))
        agg: dict[str, list[float]] = {}
        for _ in range(int(self.hparams.ppo_epochs)):
            perm = torch.randperm(n, generator=self._gen).to(self.device)
            for start in range(0, n, mb):
                idx = perm[start : start + mb]
                loss, stats = self.ppo_loss(*(buf[k][idx] for k in ("states", "actions", "old_logp", "advantages",
                                                                     "returns")))
                opt.zero_grad()
                self.manual_backward(loss)
                opt.step()
                for k, v in stats.items():
                    agg.setdefault(k, []).append(float(v))
        row = {"step": float(self.global_step), "epoch": float(self.current_epoch),
               "reward": float(buf["returns"].mean())}
        row.update({k: sum(v) / len(v) for k, v in agg.items()})
        counts = torch.bincount(buf["actions"].cpu(), minlength=len(self.actions)).float() / n
        row.update({f"share_{a}": float(c) for a, c in zip(self.actions, counts)})
        self.log_dict({f"train/{k}": v for k, v in row.items() if k not in ("step", "epoch")},
                      on_step=True, on_epoch=False, batch_size=n)
        self._pending = row

    def on_train_epoch_end(self) -> None:
        row = getattr(self, "_pending", None)
        if row is None:
            return
        if self.val_ids and self.env is not None:
            ev = self.env.evaluate_policy(self, self.val_ids)
            row.update({"val_reward": ev["policy_reward"], "val_random_reward": ev["random_reward"]})
            self.log_dict({"val/reward": ev["policy_reward"], "val/random_reward": ev["random_reward"]},
                          on_step=False, on_epoch=True)
        if self.train_ids and self.env is not None:
            row["train_greedy_reward"] = self.env.evaluate_policy(self, self.train_ids)["policy_reward"]
            self.log("train/greedy_reward", row["train_greedy_reward"], on_step=False, on_epoch=True)
        self.history.append(row)
        self._pending = None
        limit = self.hparams.max_iterations
        if limit is not None and len(self.history) >= limit and self.trainer is not None:
            self.trainer.should_stop = True

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)




def policy_compatibility(settings: CDFRAGSettings, encoder: Encoder) -> str:
    """A refinement policy fits a CDF-RAG retriever whose state encoder and rewarded retrieval (causal graph,
    traversal, path weight, the actions' execution) are the ones it was trained against."""
    s = settings
    return stable_digest(getattr(encoder, "model_key", ""), as_dict(s.causal), as_dict(s.traversal), s.path_weight,
                         s.expand_keywords, s.refine_with_llm, length=16)


__all__ = ["ActorCritic", "PPOPolicy", "policy_compatibility"]
