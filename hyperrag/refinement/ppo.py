"""PPO for the query-refinement policy (CDF-RAG §2.2, Appendix A.3), as a LightningModule with manual optimisation.

The MDP: the state ``s_t`` is the sentence embedding of the current query (the question, then the last action's
rewrites: :meth:`~hyperrag.retrievers.cdfrag.CDFRAGRetriever.states`), an action is expand / simplify / decompose,
or — from the second step on — ``stop``; an episode takes at most ``T`` actions (the retriever's
``max_refine_steps``), so actions combine (decompose, then expand each sub-question). The reward of a step is the
change of the paper's reward ``R = λ1·relevance + λ2·causal depth + λ3·similarity + λ4·(1 − hallucination)`` that
the action brings (:class:`~hyperrag.refinement.env.RefinementEnv`), so an episode's return is ``R(final) − R(question)``;
``stop`` earns 0 and ends it. Returns are undiscounted, advantages ``A_t = G_t − V(s_t)``, normalised over the
rollout.

One training step = one PPO iteration:
  1. rollout — run an episode per question of the batch (``rollouts_per_state`` times), sampling
     ``a ~ π_old(·|s)`` (``stop`` masked at the first step), recording ``log π_old(a|s)``, ``V_old(s)`` and the
     step rewards from the environment;
  2. ``ppo_epochs`` passes over shuffled minibatches of the steps minimising
     ``−min(ρA, clip(ρ, 1−ε, 1+ε)A) + c_v (V(s) − G)² − c_e H(π(·|s))`` with ``ρ = π(a|s) / π_old(a|s)``.
Logged: mean return, policy/value loss, entropy, approximate KL, clip fraction, action shares; at each epoch end
the greedy policy's and the uniform-random policy's final reward on the held-out questions. The history is kept
in the checkpoint (``history``) for the training-curve plot.
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
    from hyperrag.protocols import Encoder, LanguageModel
    from hyperrag.retrievers.settings import CDFRAGSettings

STOP = "stop"
POLICY_ACTIONS: tuple[str, ...] = (*ACTIONS, STOP)


def mlp(state_dim: int, hidden: int, layers: int, dropout: float) -> nn.Sequential:
    """Input dropout, then ``layers`` hidden layers of width ``hidden`` (linear, tanh)."""
    blocks: list[nn.Module] = [nn.Dropout(dropout)]
    width = state_dim
    for _ in range(layers):
        blocks += [nn.Linear(width, hidden), nn.Tanh()]
        width = hidden
    return nn.Sequential(*blocks)


class ActorCritic(nn.Module):
    """A policy network and a value network, each an MLP of ``layers`` hidden layers of width ``hidden`` (tanh;
    separate, as Stable-Baselines3's PPO ``MlpPolicy`` builds them — the paper's "two-layer MLP policy network
    (hidden size 256)" is ``layers=2, hidden=256``), with a linear head: action logits [B, A] and the value [B]."""

    def __init__(self, state_dim: int, hidden: int, n_actions: int, dropout: float = 0.0, layers: int = 2) -> None:
        super().__init__()
        self.actor = mlp(state_dim, hidden, layers, dropout)
        self.critic = mlp(state_dim, hidden, layers, dropout)
        self.policy = nn.Linear(hidden, n_actions)
        self.value = nn.Linear(hidden, 1)
        nn.init.zeros_(self.policy.weight)  # start uniform
        nn.init.zeros_(self.policy.bias)

    def forward(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.policy(self.actor(states)), self.value(self.critic(states)).squeeze(-1)


class PPOPolicy(L.LightningModule):
    """The settings (``hidden`` to ``max_iterations``) are ``task.model`` of ``hydra_configs/task/ppo.yaml``, their
    only source; :class:`~hyperrag.training.tasks.ppo.PPOTask` adds ``state_dim`` and ``max_steps``. By hand:
    ``PPOPolicy(**task_arguments("ppo", state_dim=384, max_steps=2))`` (:mod:`hyperrag.config`).

    Args:
        state_dim: width of the state (the sentence-embedding dimension).
        hidden: width of the hidden layers; ``layers``: hidden layers of the policy and of the value network.
        actions: action names (index order of the logits); the last one, ``stop``, is only allowed after the first
            step. The method's action set (:data:`POLICY_ACTIONS`), not a setting.
        lr: Adam learning rate; ``weight_decay`` its L2 penalty.
        clip: PPO's ε.
        value_coef / entropy_coef: c_v and c_e.
        ppo_epochs: optimisation passes per rollout; ``minibatch_size`` samples per update.
        rollouts_per_state: episodes per question per iteration.
        max_steps: T, actions per episode at most (the retriever's ``max_refine_steps``).
        normalize_advantage: standardise advantages over the rollout.
        dropout: input dropout of both networks.
        seed: sampling of rollout actions.
        max_iterations: stop after this many PPO iterations (``trainer.should_stop``) whatever
            ``trainer.max_epochs`` says — with a few dozen training questions, long training memorises them
            (held-out reward falls); ``None`` = the Trainer decides.
    """

    def __init__(self, state_dim: PositiveInt, *, hidden: PositiveInt, layers: PositiveInt, lr: PositiveFloat,
                 weight_decay: NonNegativeFloat, clip: PositiveFloat, value_coef: NonNegativeFloat,
                 entropy_coef: NonNegativeFloat, ppo_epochs: PositiveInt, minibatch_size: PositiveInt,
                 rollouts_per_state: PositiveInt, normalize_advantage: bool, dropout: Probability, seed: int,
                 max_iterations: PositiveInt | None, max_steps: PositiveInt,
                 actions: tuple[str, ...] | list[str] = POLICY_ACTIONS) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.actions = list(actions)
        if self.actions[-1] != STOP:
            raise ValueError(f"the last action must be {STOP!r}, got {self.actions}")
        self.net = ActorCritic(state_dim, hidden, len(self.actions), dropout, layers)
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

    def masked(self, logits: torch.Tensor, allow_stop: torch.Tensor | bool,
               valid: torch.Tensor | None = None) -> torch.Tensor:
        """Logits [B, A] with ``stop`` impossible where it is not allowed (``allow_stop``: bool or BoolTensor [B])
        and, with ``valid`` (BoolTensor [B, A − 1]), the actions that would leave the query unchanged impossible
        (a row with no valid action may stop)."""
        allow = torch.as_tensor(allow_stop, device=logits.device).expand(logits.shape[0])
        out = logits.clone()
        if valid is not None:
            valid = valid.to(logits.device)
            out[:, :-1] = torch.where(valid, logits[:, :-1], torch.full_like(logits[:, :-1], float("-inf")))
            allow = allow | ~valid.any(dim=1)
        out[:, -1] = torch.where(allow, logits[:, -1], torch.full_like(logits[:, -1], float("-inf")))
        return out

    @torch.no_grad()
    def probabilities(self, states: torch.Tensor, allow_stop: torch.Tensor | bool = False,
                      valid: torch.Tensor | None = None) -> torch.Tensor:
        """π(·|s) [B, A] (dropout off: acting is deterministic given the state)."""
        was_training = self.net.training
        self.net.eval()
        logits, _ = self(states)
        self.net.train(was_training)
        return torch.softmax(self.masked(logits, allow_stop, valid), dim=-1).cpu()

    @torch.no_grad()
    def act(self, states: torch.Tensor, greedy: bool = True, allow_stop: torch.Tensor | bool = False,
            valid: torch.Tensor | None = None) -> list[str]:
        """Action names for states [B, D]: argmax (``greedy``) or sampled (``valid``: see :meth:`masked`)."""
        probs = self.probabilities(states, allow_stop, valid)
        idx = probs.argmax(-1) if greedy else torch.multinomial(probs, 1, generator=self._gen).squeeze(-1)
        return [self.actions[i] for i in idx.tolist()]

    # ---- PPO -----------------------------------------------------------------------------------------
    def ppo_loss(self, states: torch.Tensor, actions: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                 returns: torch.Tensor, allow_stop: torch.Tensor, valid: torch.Tensor | None = None
                 ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Clipped surrogate + value loss − entropy bonus, and diagnostics."""
        h = self.hparams
        logits, values = self(states)
        dist = Categorical(logits=self.masked(logits, allow_stop, valid))
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

    def rollout(self, ids: list[int]) -> dict[str, torch.Tensor] | None:
        """An episode of at most ``max_steps`` actions for each of ``ids`` (each ``rollouts_per_state`` times):
        the visited states, actions, ``log π_old``, returns-to-go and advantages, one row per step taken."""
        reps = int(self.hparams.rollouts_per_state)
        episodes = [i for i in ids for _ in range(reps)]
        seqs: list[tuple[str, ...]] = [() for _ in episodes]
        active = list(range(len(episodes)))
        rows: list[dict[str, Any]] = []  # per step: episode, state, action, logp, value, allow_stop, reward
        for t in range(int(self.hparams.max_steps)):
            if not active:
                break
            valid = self.env.valid_actions([episodes[e] for e in active], [seqs[e] for e in active])
            if t == 0:  # a question no action changes stays unrefined: no decision to learn
                keep = [n for n in range(len(active)) if bool(valid[n].any())]
                active, valid = [active[n] for n in keep], valid[keep]
                if not active:
                    break
            states = self.env.states([episodes[e] for e in active], [seqs[e] for e in active])
            with torch.no_grad():
                was_training = self.net.training
                self.net.eval()  # π_old without dropout; dropout only regularises the updates
                logits, values = self(states)
                self.net.train(was_training)
                dist = Categorical(logits=self.masked(logits, t > 0, valid))
                actions = torch.multinomial(dist.probs.cpu(), 1, generator=self._gen).squeeze(-1).to(self.device)
                old_logp = dist.log_prob(actions)
            names = [self.actions[a] for a in actions.tolist()]
            go = [(e, n) for e, n in zip(active, names) if n != STOP]
            before = self.env.rewards([episodes[e] for e, _ in go], [seqs[e] for e, _ in go])
            after = self.env.rewards([episodes[e] for e, _ in go], [seqs[e] + (n,) for e, n in go])
            gain = {e: a - b for (e, _), a, b in zip(go, after, before)}
            for j, (e, n) in enumerate(zip(active, names)):
                rows.append({"episode": e, "t": t, "state": states[j], "action": actions[j], "logp": old_logp[j],
                             "value": values[j], "allow_stop": t > 0, "valid": valid[j], "reward": gain.get(e, 0.0)})
            for e, n in go:
                seqs[e] = seqs[e] + (n,)
            active = [e for e, _ in go]
        if not rows:
            return None
        # undiscounted returns-to-go per episode
        ret = [0.0] * len(rows)
        tail: dict[int, float] = {}
        for k in range(len(rows) - 1, -1, -1):
            e = rows[k]["episode"]
            tail[e] = tail.get(e, 0.0) + rows[k]["reward"]
            ret[k] = tail[e]
        returns = torch.tensor(ret, dtype=torch.float32, device=self.device)
        values = torch.stack([r["value"] for r in rows])
        adv = returns - values
        if self.hparams.normalize_advantage and adv.numel() > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        final = self.env.rewards([episodes[e] for e in range(len(episodes))], seqs)
        return {"states": torch.stack([r["state"] for r in rows]).to(self.device).float(),
                "actions": torch.stack([r["action"] for r in rows]), "old_logp": torch.stack([r["logp"] for r in rows]),
                "advantages": adv, "returns": returns,
                "allow_stop": torch.tensor([r["allow_stop"] for r in rows], device=self.device),
                "valid": torch.stack([r["valid"] for r in rows]).to(self.device),
                "final_reward": torch.tensor(final, dtype=torch.float32),
                "episode_length": torch.tensor([len(s) for s in seqs], dtype=torch.float32)}

    def training_step(self, batch: torch.Tensor, batch_idx: int) -> None:
        opt = self.optimizers()
        buf = self.rollout([int(i) for i in batch.tolist()])
        if buf is None:  # no question of the batch has an action that changes it
            return
        n = buf["actions"].numel()
        mb = max(1, min(int(self.hparams.minibatch_size), n))
        keys = ("states", "actions", "old_logp", "advantages", "returns", "allow_stop", "valid")
        agg: dict[str, list[float]] = {}
        for _ in range(int(self.hparams.ppo_epochs)):
            perm = torch.randperm(n, generator=self._gen).to(self.device)
            for start in range(0, n, mb):
                idx = perm[start : start + mb]
                loss, stats = self.ppo_loss(*(buf[k][idx] for k in keys))
                opt.zero_grad()
                self.manual_backward(loss)
                opt.step()
                for k, v in stats.items():
                    agg.setdefault(k, []).append(float(v))
        row = {"step": float(self.global_step), "epoch": float(self.current_epoch),
               "reward": float(buf["final_reward"].mean()), "episode_length": float(buf["episode_length"].mean())}
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




def llm_identity(llm: LanguageModel | None) -> str:
    """Which LLM carried out the actions and judged hallucination: its label (the model, or ``upper bound
    (oracle)``; ``LLM-free`` without one)."""
    from hyperrag.llm import llm_label

    return llm_label(llm)


def policy_compatibility(settings: CDFRAGSettings, encoder: Encoder, llm: LanguageModel | None = None) -> str:
    """A refinement policy fits a CDF-RAG retriever whose state encoder, rewarded retrieval (causal graph,
    traversal, knowledge set), episode length and action execution (the stand-ins, or which LLM) are the ones it
    was trained against."""
    s = settings
    return stable_digest(getattr(encoder, "model_key", ""), as_dict(s.causal), as_dict(s.traversal),
                         s.causal_retrieval, s.semantic_k, s.causal_k, s.union_order, s.max_refine_steps, s.expand_keywords,
                         s.refine_with_llm, llm_identity(llm) if s.refine_with_llm else "stand-ins",
                         length=16)


__all__ = ["POLICY_ACTIONS", "STOP", "ActorCritic", "PPOPolicy", "llm_identity", "policy_compatibility"]
