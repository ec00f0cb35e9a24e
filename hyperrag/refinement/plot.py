"""The PPO training curve: rollout reward, greedy train / held-out reward, random baseline, entropy."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hyperrag.utils.plotting import pyplot, save_figure


def plot_training_curve(history: Sequence[dict[str, float]], path: str | Path, title: str = "PPO") -> Path:
    """Write a PNG of the per-iteration history (:attr:`PPOPolicy.history`) to ``path``."""
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    x = list(range(1, len(history) + 1))

    def series(key: str) -> tuple[list[int], list[float]]:
        pts = [(i, row[key]) for i, row in zip(x, history) if key in row]
        return [p[0] for p in pts], [p[1] for p in pts]

    for key, label, style in (("reward", "rollout reward (train, sampled)", "-"),
                              ("train_greedy_reward", "greedy policy, train", "-"),
                              ("val_reward", "greedy policy, held-out", "-"),
                              ("val_random_reward", "uniform random, held-out", "--")):
        xs, ys = series(key)
        if xs:
            ax1.plot(xs, ys, style, label=label)
    ax1.set_xlabel("PPO iteration")
    ax1.set_ylabel("mean reward")
    ax1.legend(fontsize=8)
    ax1.grid(alpha=0.3)
    for key in ("entropy", "approx_kl", "clip_frac"):
        xs, ys = series(key)
        if xs:
            ax2.plot(xs, ys, label=key)
    shares = [k for k in (history[0] if history else {}) if k.startswith("share_")]
    for key in shares:
        xs, ys = series(key)
        ax2.plot(xs, ys, ":", label=key.replace("share_", "π: "))
    ax2.set_xlabel("PPO iteration")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.suptitle(title)
    return save_figure(fig, path)


__all__ = ["plot_training_curve"]
