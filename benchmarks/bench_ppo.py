"""PPO refinement policy vs random, always-expand, the best fixed action and no refinement, cross-fitted on
musique_dev, with 95% intervals and paired differences.

    python benchmarks/bench_ppo.py [--folds 5] [--seed 0] [--llm none|oracle] [--classifier auto|none|PATH]
                                   [--relevance context|gold_recall]

One environment (:class:`~hyperrag.refinement.env.RefinementEnv`) over the real CDF-RAG pipeline as
``method/cdfrag.yaml`` configures it (episodes of up to ``max_refine_steps`` actions, dual-path retrieval over the
corpus's causal graph with the UniCausal pair classifier when ``models/causal_pair`` holds one). ``--llm none``:
the actions are the documented LLM-free stand-ins and the reward's hallucination term is off; ``--llm oracle``:
the actions are carried out by the oracle backend (gold decompositions / bridge entities; an upper bound) and each
outcome's answer is generated and checked, so λ4 is on. The questions are split into the same ``--folds`` folds as
``retrieve.py cv_folds=K`` (:func:`hyperrag.runners.cross_fit.folds`); for each fold PPO (``task=ppo``'s model
settings) trains on the other folds, and every question is scored once by a policy that never saw it:
greedy PPO episode; uniform random (exact expectation over episodes); the best fixed single action chosen on the
training folds; always "expand"; no refinement (the question as asked); the per-question best sequence (oracle,
hindsight). The reward is ``task=ppo``'s (label-free by default: relevance of the top-5 context to the original
question, Appendix A.3; ``--relevance gold_recall`` is the labelled research reward). Reported per arm, as means over
the questions with 95% bootstrap intervals (:mod:`hyperrag.eval.intervals`): reward, its relevance term, recall@5 and
FCR@5 (gold passages: evaluation only), and with an LLM EM / F1 of the generated answer; then PPO's paired
difference against every other arm (interval and permutation p-value). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
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
from hyperrag.config.validation import plain
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.eval.intervals import mean_interval, paired_comparison
from hyperrag.refinement.datamodule import RolloutDataModule
from hyperrag.refinement.env import RefinementEnv
from hyperrag.retrievers.cdfrag import CDFRAGRetriever
from hyperrag.runners.cross_fit import folds


def ppo_config(seed: int):  # type: ignore[no-untyped-def]
    """``task=ppo``'s settings (``hydra_configs/task/ppo.yaml``; no second copy here)."""
    from hyperrag.config import compose_config

    return compose_config("train", ["task=ppo", f"seed={seed}"]).task


def ppo_model(state_dim: int, max_steps: int, seed: int):  # type: ignore[no-untyped-def]
    """``task=ppo``'s policy and its iteration count."""
    from hydra.utils import instantiate

    cfg = ppo_config(seed)
    return instantiate(cfg.model)(state_dim=state_dim, max_steps=max_steps), int(cfg.model.max_iterations)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(os.environ.get("HYPERRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
                                          / "musique_dev"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm", choices=("none", "oracle"), default="none")
    ap.add_argument("--classifier", default="auto", help="auto | none | a causal_pair checkpoint")
    ap.add_argument("--models-dir", default=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    ap.add_argument("--relevance", choices=("context", "gold_recall"), default=None,
                    help="the reward's relevance term (default: task=ppo's, label-free)")
    args = ap.parse_args()
    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    torch.set_num_threads(1)

    ds = musique_dataset(args.data)
    encoder = TextEncoder(show_progress=False)
    llm = None
    if args.llm == "oracle":
        from hyperrag.embedding.encoder import default_cache_dir
        from hyperrag.llm.oracle import OracleLLM

        llm = OracleLLM(cache_path=str(default_cache_dir() / "llm" / "responses.sqlite"),
                        show_usage=False)
        llm.bind_gold(ds)
        llm.start()
    else:
        from hyperrag.llm.base import NoLLM

        llm = NoLLM()
    t0 = time.perf_counter()
    base = method_settings("cdfrag", policy=None, classifier=args.classifier, models_dir=str(args.models_dir))
    settings = dataclasses.replace(base, generation=dataclasses.replace(base.generation, max_requery=0))
    retriever = CDFRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
    retriever.index(ds)
    task = ppo_config(args.seed)
    env_cfg = dict(plain(task.env))  # the PPO task's own environment settings (as training/tasks/ppo.py)
    env_cfg["relevance"] = relevance = args.relevance or str(env_cfg["relevance"])
    env = RefinementEnv(retriever, ds.queries, max_steps=settings.max_refine_steps, **env_cfg)
    usable = [i for i, q in enumerate(ds.queries) if q.gold_ids or relevance == "context"]
    env.reward_table(usable)  # every (question, sequence) once: the rest is memoised
    env_seconds = time.perf_counter() - t0
    print(f"environment: {len(usable)} questions x {len(env.sequences())} sequences in {env_seconds:.1f}s "
          f"(llm {args.llm}, relevance {relevance}, hallucination term {env.hallucination_term}; classifier "
          f"{retriever.classifier_path}; causal graph {retriever.causal_graph.stats['edges']} edges)")

    position = {q.id: i for i, q in enumerate(ds.queries)}
    arms = ("ppo", "random", "always_expand", "best_fixed", "no_refinement", "oracle")
    keys = {"reward": "reward", "relevance": "relevance", "recall@5": "coverage", "fcr@5": "full_chain",
            "em": "em", "f1": "f1"}
    scores: dict[str, dict[str, list[float | None]]] = {a: {m: [] for m in keys} for a in arms}
    per_fold, train_seconds = [], 0.0
    usable_set = set(usable)
    for f, fold in enumerate(folds(ds.queries, args.folds, args.seed)):
        held = [position[q.id] for q in fold if position[q.id] in usable_set]
        held_set = set(held)
        train = [i for i in usable if i not in held_set]
        L.seed_everything(args.seed + f, verbose=False)
        policy, iterations = ppo_model(int(env.states(train[:1], [()]).shape[1]), env.max_steps, args.seed + f)
        policy.attach(env, train, [])
        trainer = L.Trainer(max_epochs=iterations, logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False, accelerator="cpu")
        t1 = time.perf_counter()
        trainer.fit(policy, datamodule=RolloutDataModule(train, seed=args.seed + f))
        train_seconds += time.perf_counter() - t1
        ev = env.evaluate_policy(policy, held, select_ids=train)
        seqs = env.greedy_sequences(policy, held)
        best = ev["best_fixed_action"]
        outcome = {"ppo": env.outcomes(held, seqs), "best_fixed": env.outcomes(held, [(best,)] * len(held)),
                   "always_expand": env.outcomes(held, [("expand",)] * len(held)),
                   "no_refinement": env.outcomes(held, [()] * len(held)),
                   "oracle": [max(env.outcomes([i] * len(env.sequences()), env.sequences()), key=lambda o: o["reward"])
                              for i in held]}
        for arm, outs in outcome.items():
            for m, key in keys.items():
                scores[arm][m] += [o[key] for o in outs]
        for m, key in keys.items():  # the uniformly random policy: exact expectation over its episodes
            scores["random"][m] += [env.random_value(i, key) if any(env.outcomes([i], [s])[0][key] is not None
                                                                   for s in env.sequences()) else None
                                    for i in held]
        per_fold.append({"fold": f, "questions": len(held), "ppo_reward": round(ev["policy_reward"], 4),
                         "random_reward": round(ev["random_reward"], 4), "best_fixed_action": best,
                         "best_fixed_reward": round(ev["best_fixed_reward"], 4),
                         "oracle_reward": round(ev["oracle_reward"], 4), "policy_sequences": ev["policy_sequences"]})
        print(f"fold {f}: PPO {ev['policy_reward']:.3f}  random {ev['random_reward']:.3f}  best fixed ({best}, chosen "
              f"on train) {ev['best_fixed_reward']:.3f}  oracle {ev['oracle_reward']:.3f}  {ev['policy_sequences']}")
    summary: dict[str, dict[str, str | float | None]] = {}
    for arm in arms:
        summary[arm] = {}
        for m, values in scores[arm].items():
            vals = [float(v) for v in values if v is not None]
            if not vals:
                continue
            ci = mean_interval(vals, scale=1.0 if m in ("reward", "relevance") else 100.0)
            summary[arm][m] = round(ci.estimate, 4)
            summary[arm][f"{m}_ci"] = ci.text(3 if m in ("reward", "relevance") else 1)
        print(f"{arm:>14}: " + "  ".join(f"{m} {summary[arm][m + '_ci']}" for m in keys if m + "_ci" in summary[arm]))
    paired: dict[str, dict[str, str]] = {}
    for arm in arms[1:]:
        paired[arm] = {}
        for m in keys:
            pairs = [(a, b) for a, b in zip(scores["ppo"][m], scores[arm][m]) if a is not None and b is not None]
            if len(pairs) < 2:
                continue
            cmp = paired_comparison([float(a) for a, _ in pairs], [float(b) for _, b in pairs],
                                    scale=1.0 if m in ("reward", "relevance") else 100.0)
            paired[arm][m] = (f"{cmp.difference.text(3 if m in ('reward', 'relevance') else 1)} "
                              f"p={cmp.p_value:.3f}")
        print(f"PPO − {arm:>13}: " + "  ".join(f"{m} {v}" for m, v in paired[arm].items()))
    print(json.dumps({"bench": "ppo_cross_fitted", "llm": args.llm, "relevance": relevance, "folds": args.folds,
                      "seed": args.seed, "questions": len(scores["ppo"]["reward"]), "max_steps": env.max_steps,
                      "hallucination_term": env.hallucination_term, **summary, "ppo_minus": paired,
                      "per_fold": per_fold, "env_seconds": round(env_seconds, 2),
                      "train_seconds": round(train_seconds, 2),
                      "classifier": str(retriever.classifier_path) if retriever.classifier_path else None}))


if __name__ == "__main__":
    main()
