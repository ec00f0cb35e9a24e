"""PPO query-refinement policy vs a uniform-random action policy, on held-out musique_dev questions.

    python benchmarks/bench_ppo.py [--train 35] [--heldout 16] [--seeds 0 1 ... 9] [--epochs 30]

LLM-free (deterministic, fast): the actions are the documented stand-ins (expand = pseudo-relevance-feedback
keywords of the top dense passage, simplify = stop/filler words dropped, decompose = clause split + the
question), retrieval is the real CDF-RAG dual path (dense + causal graph of the corpus; the newest
``models/causal_pair`` classifier when there is one, else rule priors), and the reward is the policy's own:
``1.0·recall@5 + 0.2·causal depth + 0.2·similarity to the question + 0.1·(1 − hallucination)`` (hallucination 0
without an LLM). For each seed the questions with gold passages are split into ``--train`` / ``--heldout``
(the split and PPO's sampling depend on the seed); PPO trains on the training questions, and on the held-out
ones its greedy action's reward is compared with the uniform-random policy's expected reward (mean over the
three actions), the action that was best on the training questions (a constant policy), the best fixed action
in hindsight and the per-question oracle. Means ± sd are over all held-out
questions of all seeds. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import lightning as L
import torch

from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.llm.base import NoLLM
from hyperrag.refinement.datamodule import RolloutDataModule
from hyperrag.refinement.env import RefinementEnv, split_queries
from hyperrag.refinement.ppo import PPOPolicy
from hyperrag.retrievers.cdfrag import CDFRAGRetriever


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(os.environ.get("HYPERRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
                                          / "musique_dev"))
    ap.add_argument("--train", type=int, default=35)
    ap.add_argument("--heldout", type=int, default=16)
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    ap.add_argument("--epochs", type=int, default=30, help="PPO iterations (the task=ppo default)")
    ap.add_argument("--classifier", default="auto", help="auto | none | a causal_pair checkpoint")
    ap.add_argument("--models-dir", default=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    args = ap.parse_args()
    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    torch.set_num_threads(1)

    ds = musique_dataset(args.data)
    encoder = TextEncoder(show_progress=False)
    t0 = time.perf_counter()
    settings = method_settings("cdfrag", policy=None, classifier=args.classifier, models_dir=str(args.models_dir),
                               generation={"enabled": False})
    retriever = CDFRAGRetriever(settings, encoder=encoder, llm=NoLLM(), device="cpu")
    retriever.index(ds)
    env = RefinementEnv(retriever, ds.queries, k=5)
    usable = [i for i, q in enumerate(ds.queries) if q.gold_ids]
    table = env.reward_table(usable)  # every (question, action) once: the rest is memoised
    env_seconds = time.perf_counter() - t0
    print(f"environment: {len(usable)} questions x {len(env.actions)} actions in {env_seconds:.1f}s "
          f"(classifier: {retriever.classifier_path}; causal graph: {retriever.causal_graph.stats['edges']} edges)")
    print("mean reward per action over all questions: " +
          ", ".join(f"{a} {v:.3f}" for a, v in zip(env.actions, table.mean(0).tolist())))

    ppo_all, rnd_all, per_seed = [], [], []
    cov_ppo, cov_rnd, fixed_all = [], [], []
    train_seconds = 0.0
    for seed in args.seeds:
        L.seed_everything(seed, verbose=False)
        train, held = split_queries(ds.queries, args.train, args.heldout, seed=seed)
        policy = PPOPolicy(state_dim=int(env.states.shape[1]), hidden=64, entropy_coef=0.05, seed=seed,
                           max_iterations=args.epochs).attach(env, train, held)
        trainer = L.Trainer(max_epochs=args.epochs, logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False, accelerator="cpu")
        t1 = time.perf_counter()
        trainer.fit(policy, datamodule=RolloutDataModule(train, seed=seed))
        train_seconds += time.perf_counter() - t1
        ev = env.evaluate_policy(policy, held)
        # the constant baseline a practitioner would pick: the action best on the *training* questions
        fixed = int(env.reward_table(train).mean(0).argmax())
        train_fixed = float(env.reward_table(held)[:, fixed].mean())
        fixed_all.append(train_fixed)
        ppo_all += ev["policy_rewards"]
        rnd_all += ev["random_rewards"]
        chosen = policy.act(env.states[held], greedy=True)
        outs = env.outcomes(held, chosen)
        cov_ppo += [o["coverage"] for o in outs]
        cov_rnd += [statistics.fmean(o["coverage"] for o in env.outcomes([i] * 3, env.actions)) for i in held]
        per_seed.append({"seed": seed, "ppo_reward": round(ev["policy_reward"], 4),
                         "random_reward": round(ev["random_reward"], 4),
                         "best_fixed_action": ev["best_fixed_action"], "best_fixed_reward": round(ev["best_fixed_reward"], 4),
                         "train_best_action": env.actions[fixed], "train_best_action_reward": round(train_fixed, 4),
                         "oracle_reward": round(ev["oracle_reward"], 4), "policy_actions": ev["policy_actions"]})
        print(f"seed {seed}: PPO {ev['policy_reward']:.3f} ± {ev['policy_reward_sd']:.3f}  random "
              f"{ev['random_reward']:.3f} ± {ev['random_reward_sd']:.3f}  train-best action ({env.actions[fixed]}) "
              f"{train_fixed:.3f}  held-out-best ({ev['best_fixed_action']}) {ev['best_fixed_reward']:.3f}  oracle {ev['oracle_reward']:.3f}  actions {ev['policy_actions']}")

    def msd(xs: list[float]) -> tuple[float, float]:
        return statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0

    ppo_m, ppo_s = msd(ppo_all)
    rnd_m, rnd_s = msd(rnd_all)
    wins = sum(s["ppo_reward"] > s["random_reward"] for s in per_seed)
    print(f"held-out ({len(ppo_all)} question-seeds): PPO {ppo_m:.3f} ± {ppo_s:.3f} vs random {rnd_m:.3f} ± {rnd_s:.3f}; "
          f"PPO ahead in {wins}/{len(per_seed)} seeds; train-best constant action {statistics.fmean(fixed_all):.3f}; recall@5 PPO {100 * statistics.fmean(cov_ppo):.1f} vs random "
          f"{100 * statistics.fmean(cov_rnd):.1f}")
    print(json.dumps({
        "ppo_reward": round(ppo_m, 4), "ppo_reward_sd": round(ppo_s, 4),
        "random_reward": round(rnd_m, 4), "random_reward_sd": round(rnd_s, 4),
        "train_best_action_reward": round(statistics.fmean(fixed_all), 4), "heldout_queries": args.heldout, "train_queries": args.train, "seeds": len(per_seed),
        "ppo_wins_seeds": wins, "ppo_recall@5": round(100 * statistics.fmean(cov_ppo), 2),
        "random_recall@5": round(100 * statistics.fmean(cov_rnd), 2),
        "seed_ppo_reward_sd": round(statistics.stdev([s["ppo_reward"] for s in per_seed]), 4) if len(per_seed) > 1 else 0.0,
        "per_seed": per_seed, "env_seconds": round(env_seconds, 2), "train_seconds": round(train_seconds, 2),
        "classifier": str(retriever.classifier_path) if retriever.classifier_path else None,
    }))


if __name__ == "__main__":
    main()
