"""PPO refinement policy vs random, every fixed action and no refinement, cross-fitted on musique_dev, with 95%
intervals and paired differences, under either reading of the paper's reward.

    python benchmarks/bench_ppo.py [--folds 5] [--seed 0] [--llm none|oracle] [--classifier auto|none|PATH]
                                   [--reward a3|s22] [--relevance gain|context|gold_recall] [--match auto|judge|lexical]
                                   [--max-steps 1] [--out FILE.json] [--ceiling-only] [--supervised]
                                   [--variants default,cv,cv@cv2,...] [--max-folds N]

Issue 46 (the reward against the retrieval objective): before training, every reading's agreement with ΔFCR@5 over
question × action (:func:`hyperrag.refinement.agreement.reward_agreement`: Spearman ρ, within-question concordance,
the reward's per-question best vs the ceiling); ``--supervised``: can the policy's state tell which action wins (a
classifier fitted on the training folds' FCR@5-best action, cross-fitted); ``--variants``: several reward readings /
action sets trained and scored over the same folds and memoised outcomes — ``cv`` = the λs chosen on each fold's
training questions (``task.env.tune_weights``), ``topk`` = r over the top-k (``task.env.match_scope``), ``s22`` =
§2.2's reward, ``@cv2`` / ``@a+b`` = a restricted action set (``task.env.actions``) — each with PPO's share of the
ceiling's headroom over decompose, expand and the best fixed action chosen on the training folds.

One environment (:class:`~hyperrag.refinement.env.RefinementEnv`) over the real CDF-RAG pipeline as
``method/cdfrag.yaml`` configures it (episodes of ``--max-steps`` actions: 1 is A.3's one of expand / simplify /
decompose; 2 the labelled chains-with-stop option), dual-path retrieval over the corpus's causal graph with the
UniCausal pair classifier when ``models/causal_pair`` holds one (pair verification off: one graph for every run —
the oracle has no gold for verification, so it would leave every pair unverified anyway). ``--llm none``: the actions are the documented
LLM-free stand-ins, the relevance gain is scored lexically and the reward's hallucination term is off; ``--llm
oracle``: the actions are carried out by the oracle backend (gold decompositions / bridge entities), the gain is
judged by the oracle's ``context_coverage`` (the share of gold passages in K) and each outcome's answer is generated
and checked, so λ4 is on — every oracle figure is an upper bound. The reward (``--reward``): ``a3`` — A.3's
λ1 r + λ2 d + λ3 s + λ4 (1 − h) with r the match gain of K over the unrefined question's K₀ (label-free); ``s22`` —
§2.2's λ1 RetrievalCoverage (gold recall@5: labelled, seen only on the training folds) + λ2 CausalDepth + λ3
ContextRelevance(K) − λ4 h. An unchanged rewrite is masked (no distinct action). The questions are split into the
same ``--folds`` folds as ``retrieve.py cv_folds=K`` (:func:`hyperrag.runners.cross_fit.folds`); for each fold PPO
(``task=ppo``'s model settings: 100 iterations × ``rollouts_per_state`` episodes per question = 500 steps per query
at one action per episode) trains on the other folds, and every question is scored once by a policy that never saw
it: greedy PPO episode; uniform random over the valid actions (exact expectation); each fixed action; the best fixed
action chosen on the training folds; no refinement; the per-question best sequence (oracle, hindsight). Reported per
arm, as means over the questions with 95% bootstrap intervals (:mod:`hyperrag.eval.intervals`): reward, its
relevance term, recall@5 and FCR@5 (gold passages: evaluation only, except in s22's coverage term on the training
folds), with an LLM EM / F1 of the generated answer; then PPO's paired difference against every other arm (interval
and permutation p-value). A question with an infrastructure failure in any outcome (the λ4 term could not be
scored) is excluded and counted. Before training, the **FCR@5 ceiling**: per question the best FCR@5 of every
sequence (none included), chosen in hindsight — what any policy over this action set could reach — beside each
sequence's FCR@5 (``--ceiling-only`` stops there). Last line: one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import dataclasses
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
from bench_results import emit  # benchmarks/bench_results.py
from cdfrag_setup import bench_llm, shared_graph_settings  # benchmarks/cdfrag_setup.py

from hyperrag.config.validation import plain
from hyperrag.data import hipporag2_release_dataset, multiple_choice_dataset, musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.eval.intervals import mean_interval, paired_comparison
from hyperrag.refinement.agreement import reward_agreement
from hyperrag.refinement.datamodule import RolloutDataModule
from hyperrag.refinement.env import RefinementEnv, RewardWeights
from hyperrag.retrievers.cdfrag import CDFRAGRetriever
from hyperrag.runners.cross_fit import folds


def ppo_config(seed: int):  # type: ignore[no-untyped-def]
    """``task=ppo``'s settings (``hydra_configs/task/ppo.yaml``; no second copy here)."""
    from hyperrag.config import compose_config

    return compose_config("train", ["task=ppo", f"seed={seed}"]).task


def ppo_model(state_dim: int, max_steps: int, seed: int, actions: tuple[str, ...] | None = None
              ):  # type: ignore[no-untyped-def]
    """``task=ppo``'s policy (over ``actions`` + stop when given: the restricted-action setting) and its iteration
    count."""
    from hydra.utils import instantiate

    cfg = ppo_config(seed)
    extra = {"actions": actions} if actions else {}
    return instantiate(cfg.model)(state_dim=state_dim, max_steps=max_steps, **extra), int(cfg.model.max_iterations)


def ceiling_headroom(chains: dict[int, list[float | None]], usable: list[int], every: list[tuple[str, ...]],
                     actions: list[str]) -> dict[str, str]:
    """The FCR@5 ceiling's paired headroom over every fixed single action, no refinement and the best fixed single
    action (best of the actions by mean FCR@5 on these questions: labelled), each ``difference [95 %] p``."""
    ceil = [max(float(c or 0.0) for c in chains[i]) for i in usable]
    arm = {("+".join(s) or "none"): [float(chains[i][n] or 0.0) for i in usable] for n, s in enumerate(every)
           if len(s) <= 1}
    best = max(actions, key=lambda a: sum(arm[a]))
    out = {}
    for name, vals in [*arm.items(), (f"best_fixed={best} (best of {len(actions)} on these questions)", arm[best])]:
        cmp = paired_comparison(ceil, vals, scale=100.0)
        out[name] = f"{cmp.difference.text(1)} p={cmp.p_value:.3f}"
    return out


def headroom_capture(scores: dict[str, dict[str, list[float | None]]], base: str) -> dict[str, str | float | None]:
    """FCR@5: the ceiling's headroom over ``base`` and PPO's gain over it (paired, per question), and PPO's share
    of the headroom (gain / headroom of the means; None when the headroom is 0)."""
    rows = [(p, b, c) for p, b, c in zip(scores["ppo"]["fcr@5"], scores[base]["fcr@5"], scores["ceiling"]["fcr@5"])
            if None not in (p, b, c)]
    ppo, fixed, ceil = ([float(r[k]) for r in rows] for k in range(3))
    head = paired_comparison(ceil, fixed, scale=100.0)
    gain = paired_comparison(ppo, fixed, scale=100.0)
    share = gain.difference.estimate / head.difference.estimate if head.difference.estimate else None
    return {"headroom": f"{head.difference.text(1)} p={head.p_value:.3f}",
            "ppo_gain": f"{gain.difference.text(1)} p={gain.p_value:.3f}",
            "share": None if share is None else round(share, 3)}


def lexical_gain_tracking(env: RefinementEnv, usable: list[int]) -> dict[str, float | int | str]:
    """What the LLM-free relevance gain tracks: Spearman's ρ, over question × single action, between the lexical
    match gain m(K) − m(K₀) and ΔR@5 (the action's gold recall@5 minus the unrefined question's), and the same
    against ΔFCR@5; with a 95 % bootstrap interval over questions (resampled as clusters of their actions)."""
    import numpy as np
    from scipy.stats import spearmanr

    rows = []
    for i in usable:
        base = env.outcomes([i], [()])[0]
        if base["coverage"] is None:
            continue
        for a in env.actions:
            o = env.outcomes([i], [(a,)])[0]
            rows.append((i, float(o["match_gain"] or 0.0), float(o["coverage"]) - float(base["coverage"]),
                         float(o["full_chain"] or 0.0) - float(base["full_chain"] or 0.0)))
    if len(rows) < 3:
        return {}
    arr = np.array([r[1:] for r in rows])
    qid = np.array([r[0] for r in rows])
    rho_r, p_r = spearmanr(arr[:, 0], arr[:, 1])
    rho_f, p_f = spearmanr(arr[:, 0], arr[:, 2])
    rng = np.random.default_rng(0)
    qs = np.unique(qid)
    boot = []
    for _ in range(2000):
        pick = np.concatenate([np.flatnonzero(qid == q) for q in rng.choice(qs, len(qs))])
        r = spearmanr(arr[pick, 0], arr[pick, 1])[0]
        if np.isfinite(r):
            boot.append(r)
    lo, hi = np.percentile(boot, [2.5, 97.5]) if boot else (float("nan"), float("nan"))
    return {"pairs": len(rows), "spearman_dR@5": round(float(rho_r), 3), "p_dR@5": round(float(p_r), 4),
            "ci95_dR@5": f"[{lo:.3f}, {hi:.3f}] (percentile bootstrap over questions)",
            "spearman_dFCR@5": round(float(rho_f), 3), "p_dFCR@5": round(float(p_f), 4),
            "gain_zero_share": round(float(np.mean(arr[:, 0] == 0)), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(os.environ.get("HYPERRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
                                          / "musique_dev"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm", choices=("none", "oracle"), default="none")
    ap.add_argument("--classifier", default="auto", help="auto | none | a causal_pair checkpoint")
    ap.add_argument("--models-dir", default=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    ap.add_argument("--reward", choices=("a3", "s22"), default=None, help="the reward reading (default: task=ppo's)")
    ap.add_argument("--relevance", choices=("gain", "context", "gold_recall"), default=None,
                    help="a3's relevance term (default: task=ppo's)")
    ap.add_argument("--match", choices=("auto", "judge", "lexical"), default=None,
                    help="the gain's match scorer (default: task=ppo's)")
    ap.add_argument("--max-steps", type=int, default=None, help="actions per episode (default: the method's)")
    ap.add_argument("--max-requery", type=int, default=None,
                    help="feedback rounds per outcome (default: the method's, method/cdfrag.yaml ships 1; 0 = off)")
    ap.add_argument("--dataset", choices=("musique", "2wiki", "cosmosqa"), default="musique",
                    help="--data's reader: musique_dataset | the 2Wiki release (data=2wiki's reader) | a CosmosQA "
                         "jsonl (data=multiple_choice's reader; each question's context is its one gold passage, so "
                         "FCR@5 = R@5, and no question has a gold decomposition: under llm=oracle every refinement "
                         "action falls back to its LLM-free stand-in alike)")
    ap.add_argument("--oracle-refinement", choices=("no_answers", "gold_answers"), default=None,
                    help="the oracle's refinement reading (default: llm/oracle.yaml's)")

    ap.add_argument("--variants", default="default",
                    help="comma-separated READING[@ACTIONS] trained and scored over the same folds and outcomes: "
                         "READING default | cv (λ chosen on the training folds for FCR@5) | topk (r's match over the "
                         "top-k) | topk_cv | s22 | s22_cv; ACTIONS all | cv2 (2 actions chosen on the training "
                         "folds) | a+b (e.g. expand+decompose)")
    ap.add_argument("--supervised", action="store_true",
                    help="also fit, per fold, a classifier from the policy's state to the training questions' "
                         "FCR@5-best action (labelled: reads their gold) and score it on the held-out fold: how much "
                         "of the headroom the state lets any learner reach")
    ap.add_argument("--max-folds", type=int, default=None,
                    help="train and score only the first N of the --folds folds (a partial run, reported as such: "
                         "the figures cover those folds' questions only)")
    ap.add_argument("--max-iterations", type=int, default=None,
                    help="PPO iterations per fold (default task=ppo's 100; fewer only for a smoke run)")
    ap.add_argument("--out", default=None, help="also write the JSON summary here")
    ap.add_argument("--ceiling-only", action="store_true",
                    help="stop after the FCR@5 ceiling (per-question best sequence by FCR@5): no training")
    args = ap.parse_args()
    logging.getLogger("lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    torch.set_num_threads(1)

    ds = (musique_dataset(args.data) if args.dataset == "musique"
          else multiple_choice_dataset(args.data, cop_base=0, name="cosmosqa") if args.dataset == "cosmosqa"
          else hipporag2_release_dataset(args.data, "2wikimultihopqa"))
    encoder = TextEncoder(show_progress=False)
    llm = bench_llm(args.llm, ds, [f"llm.refinement={args.oracle_refinement}"] if args.oracle_refinement else [])
    t0 = time.perf_counter()
    base = shared_graph_settings(args.classifier, args.models_dir)  # one causal graph for every run
    requery = base.generation.max_requery if args.max_requery is None else args.max_requery
    settings = dataclasses.replace(base, generation=dataclasses.replace(base.generation, max_requery=requery),
                                   max_refine_steps=args.max_steps or base.max_refine_steps)
    retriever = CDFRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
    retriever.index(ds)
    task = ppo_config(args.seed)
    env_cfg = dict(plain(task.env))  # the PPO task's own environment settings (as training/tasks/ppo.py)
    for key in ("reward", "relevance", "match"):
        if getattr(args, key):
            env_cfg[key] = getattr(args, key)
    reward, relevance = str(env_cfg["reward"]), str(env_cfg["relevance"])
    env = RefinementEnv(retriever, ds.queries, max_steps=settings.max_refine_steps, **env_cfg)
    needs_gold = reward == "s22" or relevance == "gold_recall"
    usable = [i for i, q in enumerate(ds.queries) if q.gold_ids or not needs_gold]
    env.reward_table(usable)  # every (question, sequence) once: the rest is memoised
    infra = [i for i in usable if any(o["infra_failure"] for o in env.outcomes([i] * (len(env.sequences()) + 1),
                                                                                 [(), *env.sequences()]))]
    usable = [i for i in usable if i not in set(infra)]
    unchanged = {a: sum(not env.changes(i, (a,)) for i in usable) for a in env.actions}
    env_seconds = time.perf_counter() - t0
    print(f"environment: {len(usable)} questions x {len(env.sequences())} sequences in {env_seconds:.1f}s "
          f"(llm {args.llm}, reward {reward}, relevance {relevance}, match {env.match}, hallucination term "
          f"{env.hallucination_term}; {len(infra)} questions excluded for an infrastructure failure; unchanged "
          f"(masked) first actions {unchanged}; judge failures {env.judge_failed}; classifier "
          f"{retriever.classifier_path}; causal graph {retriever.causal_graph.stats['edges']} edges; max_requery "
          f"{requery} (feedback loop {'on' if env.requery else 'off'}); oracle refinement "
          f"{getattr(llm, 'refinement', None)})")

    # the FCR@5 any policy over this action set could reach: per question, the best full_chain of every sequence
    # (none included), chosen in hindsight; beside it each fixed action's — the headroom a policy has over them
    every = [(), *env.sequences()]
    chains = {i: [env.outcomes([i], [s])[0]["full_chain"] for s in every] for i in usable}
    ceiling_vals = [max(float(c or 0.0) for c in chains[i]) for i in usable]
    ceiling = {"fcr@5_ceiling": mean_interval(ceiling_vals, scale=100.0).text(1),
               **{f"fcr@5_{'+'.join(s) or 'none'}": mean_interval([float(chains[i][n] or 0.0) for i in usable],
                                                                   scale=100.0).text(1)
                  for n, s in enumerate(every)}}
    print("FCR@5 ceiling (per-question best sequence by FCR@5, hindsight) and each sequence's: "
          + "  ".join(f"{k} {v}" for k, v in ceiling.items()))
    headroom = ceiling_headroom(chains, usable, every, env.actions)
    print("ceiling headroom (paired, ceiling − arm): " + "  ".join(f"{k} {v}" for k, v in headroom.items()))
    lexical = lexical_gain_tracking(env, usable) if env.match == "lexical" else None
    if lexical:
        print(f"lexical relevance gain vs ΔR@5 (question × action): {lexical}")
    # every reading's agreement with the retrieval objective over question × action (all questions: no reading
    # here is chosen on them; the cv readings' agreement is measured cross-fitted, on the held-out folds, below)
    needed = {parse_variant(v)[0] for v in args.variants.split(",")} | {"default", "topk", "s22"}
    if reward != "a3" or relevance != "gain":
        needed -= {"topk", "topk_cv"}
    readings = {name: (env.derive(**READINGS[name][0]) if READINGS[name][0] else env) for name in needed}
    agreement = {}
    for name in ("default", "topk", "s22"):
        if name in readings:
            agreement[name] = reward_agreement(readings[name], usable)
    for term, w in {"r_only": RewardWeights(1.0, 0.0, 0.0, 0.0), "d_only": RewardWeights(0.0, 1.0, 0.0, 0.0),
                    "s_only": RewardWeights(0.0, 0.0, 1.0, 0.0), "h_only": RewardWeights(0.0, 0.0, 0.0, 1.0)}.items():
        agreement[f"default:{term}"] = reward_agreement(env, usable, weights=w)
        if "s22" in readings:
            agreement[f"s22:{term}"] = reward_agreement(readings["s22"], usable, weights=w)
        if "topk" in readings and term == "r_only":
            agreement[f"topk:{term}"] = reward_agreement(readings["topk"], usable, weights=w)
    for name, a in agreement.items():
        print(f"reward vs ΔFCR@5 [{name}]: ρ {a.get('spearman')} {a.get('spearman_ci95')} p={a.get('spearman_p')}  "
              f"concordance {a.get('concordance')} {a.get('concordance_ci95')} ({a.get('concordant_pairs')} pairs)  "
              f"FCR@5 of the reward's best {a.get('reward_best_metric')} (ceiling {a.get('ceiling_metric')})",
              flush=True)
    setting = {"oracle_refinement": getattr(llm, "refinement", None), "max_requery": requery,
               "feedback_loop": env.requery, "requeried": sum(bool(env.outcomes([i], [s])[0]["requeried"])
                                                              for i in usable for s in env.sequences()),
               "refinement_calls": refinement_calls(llm, retriever)}
    print(f"refinement calls (every question × sequence, feedback rounds included): {setting['refinement_calls']}",
          flush=True)
    supervised = state_predictability(env, ds, usable, args) if args.supervised else None
    if args.ceiling_only:
        emit({"bench": "ppo_fcr_ceiling", "llm": args.llm, "data": args.data, "questions": len(usable),
              "max_steps": env.max_steps, **setting, **ceiling, "headroom": headroom, "lexical_gain": lexical,
              "agreement": agreement, "supervised": supervised},
             args.out)
        return

    results = run_variants(env, ds, usable, every, args, readings)
    result = {"bench": "ppo_cross_fitted", "llm": args.llm, "data": args.data, **setting, "headroom": headroom,
              "lexical_gain": lexical, "agreement": agreement, "supervised": supervised, "reward": reward,
              "relevance": relevance,
              "match": env.match, "excluded_infra": len(infra), "unchanged_first_actions": unchanged,
              "judge_failed": env.judge_failed, "rollouts_per_state": int(task.model.rollouts_per_state),
              "max_iterations": args.max_iterations or int(task.model.max_iterations), "folds": args.folds,
              "folds_run": args.max_folds or args.folds,
              "seed": args.seed, "max_steps": env.max_steps, "hallucination_term": env.hallucination_term,
              **ceiling, "variants": results, "env_seconds": round(env_seconds, 2),
              "classifier": str(retriever.classifier_path) if retriever.classifier_path else None}
    if "default" in results:  # the paper's reading with all actions: the old top-level keys
        result.update({k: v for k, v in results["default"].items() if k in ARMS or k in ("ppo_minus", "capture",
                                                                                            "per_fold")})
    emit(result, args.out)


def refinement_calls(llm, retriever: CDFRAGRetriever) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The LLM's refinement calls so far, per action: calls, ok and failures by kind (``no_gold``: the oracle found
    no gold for the query), and the refiner's count of calls whose stand-in ran instead."""
    usage = llm.accounting.snapshot() if getattr(llm, "accounting", None) is not None else {}
    refinement = {task: s for task, s in usage.items() if task.startswith("query_refinement")}
    per_action = {task: {"calls": s.calls, "ok": s.ok, "failures": dict(s.failures)} for task, s in refinement.items()}
    return {"per_action": per_action, "calls": sum(s.calls for s in refinement.values()),
            "no_gold": sum(s.failures["no_gold"] for s in refinement.values()),
            "stand_in_ran": retriever.refiner.llm_failed}


def state_predictability(env: RefinementEnv, ds, usable: list[int], args: argparse.Namespace  # type: ignore[no-untyped-def]
                         ) -> dict[str, object]:
    """Can the policy's state tell which action wins? Per fold, a classifier (multinomial logistic regression on
    the unit state, and 1-nearest-neighbour by cosine) is fitted on the training questions' labels — the FCR@5-best
    single action, the training folds' best fixed action (by FCR@5) where it ties for best — and scored on the
    held-out fold (cross-fitted; labelled: supervised with the training questions' gold, a reference for what any
    learner of this state could reach, not a policy of the paper). Paired against fixed decompose and the ceiling."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    position = {q.id: i for i, q in enumerate(ds.queries)}
    usable_set = set(usable)
    fcr = {i: {a: float(env.outcomes([i], [(a,)])[0]["full_chain"] or 0.0) for a in env.actions} for i in usable}
    picks: dict[str, dict[int, str]] = {"logistic": {}, "nearest": {}, "train_best_fixed": {}}
    for fold in folds(ds.queries, args.folds, args.seed):
        held = [position[q.id] for q in fold if position[q.id] in usable_set]
        train = [i for i in usable if i not in set(held)]
        fixed = max(env.actions, key=lambda a: sum(fcr[i][a] for i in train))
        labels = [fixed if fcr[i][fixed] >= max(fcr[i].values()) else max(env.actions, key=lambda a: fcr[i][a])
                  for i in train]
        x_tr = env.states(train, [()] * len(train)).numpy()
        x_he = env.states(held, [()] * len(held)).numpy()
        if len(set(labels)) > 1:
            clf = LogisticRegression(max_iter=2000).fit(x_tr, labels)
            log_pred = list(clf.predict(x_he))
        else:
            log_pred = [labels[0]] * len(held)
        near = (x_he @ x_tr.T).argmax(1)
        for j, i in enumerate(held):
            picks["logistic"][i], picks["nearest"][i] = log_pred[j], labels[int(near[j])]
            picks["train_best_fixed"][i] = fixed
    order = list(usable)
    ceil = [max(float(o["full_chain"] or 0.0) for o in env.outcomes([i] * 4, [(), *[(a,) for a in env.actions]]))
            for i in order]
    dec = [fcr[i]["decompose"] for i in order] if "decompose" in env.actions else None
    out: dict[str, object] = {"labels": "FCR@5-best action of the training questions (ties: the training folds' "
                                        "best fixed)", "ceiling": mean_interval(ceil).text(1)}
    for name, pick in picks.items():
        vals = [fcr[i][pick[i]] for i in order]
        row = {"fcr@5": mean_interval(vals).text(1),
               "actions": {a: sum(pick[i] == a for i in order) for a in env.actions}}
        if dec is not None:
            cmp = paired_comparison(vals, dec)
            row["minus_decompose"] = f"{cmp.difference.text(1)} p={cmp.p_value:.3f}{' shown' if cmp.shown else ''}"
            head = float(np.mean(ceil) - np.mean(dec))
            row["share_of_headroom_over_decompose"] = round(float(np.mean(vals) - np.mean(dec)) / head, 3) if head else None
        out[name] = row
    print(f"state predictability (supervised on the training folds' FCR@5-best action, cross-fitted): {out}",
          flush=True)
    return out


ARMS = ("ppo", "random", "fixed_expand", "fixed_simplify", "fixed_decompose", "best_fixed", "best_fixed_fcr",
        "no_refinement", "oracle", "ceiling", "ceiling_actions")
KEYS = {"reward": "reward", "relevance": "relevance", "recall@5": "coverage", "fcr@5": "full_chain", "em": "em",
        "f1": "f1"}


def parse_variant(spec: str) -> tuple[str, str]:
    """``READING[@ACTIONS]`` → (reading, actions): READING one of :data:`READINGS`; ACTIONS ``all`` (default),
    ``cv2`` (the 2 actions chosen on each fold's training questions, :func:`best_action_subset`) or a ``+``-joined
    list (e.g. ``expand+decompose``)."""
    reading, _, actions = spec.partition("@")
    if reading not in READINGS:
        raise SystemExit(f"unknown reward reading {reading!r}; expected one of {sorted(READINGS)}")
    return reading, actions or "all"


#: the reward readings a variant names: (changes to the environment's reading, λs tuned on the training folds)
READINGS: dict[str, tuple[dict[str, str], bool]] = {
    "default": ({}, False),            # the configured reading (A.3, relevance gain over K, λ = task=ppo's)
    "cv": ({}, True),                  # the same, λ2..λ4 chosen on the training folds for FCR@5 (labelled)
    "topk": ({"match_scope": "top_k"}, False),    # A.3 with r's match over the top-k retrieved passages
    "topk_cv": ({"match_scope": "top_k"}, True),
    "s22": ({"reward": "s22"}, False),  # §2.2 (RetrievalCoverage = gold recall@5, labelled)
    "s22_cv": ({"reward": "s22"}, True),
}


def share_interval(ppo: list[float], base: list[float], ceil: list[float], boot: int = 2000, seed: int = 0
                   ) -> tuple[float | None, str]:
    """PPO's share of the ceiling's headroom over ``base`` (ratio of mean differences) with a percentile bootstrap
    over questions (resamples whose headroom is 0 dropped, counted)."""
    import numpy as np

    a, b, c = (np.array(x, dtype=float) for x in (ppo, base, ceil))
    head = (c - b).mean()
    if head == 0:
        return None, "headroom 0"
    rng = np.random.default_rng(seed)
    vals, dropped = [], 0
    for _ in range(boot):
        pick = rng.integers(0, len(a), len(a))
        h = (c[pick] - b[pick]).mean()
        if h == 0:
            dropped += 1
            continue
        vals.append((a[pick] - b[pick]).mean() / h)
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return float((a - b).mean() / head), f"[{lo:.2f}, {hi:.2f}] (percentile bootstrap, {dropped} of {boot} dropped)"


def run_variants(env: RefinementEnv, ds, usable: list[int], every: list[tuple[str, ...]],  # type: ignore[no-untyped-def]
                 args: argparse.Namespace, readings: dict[str, RefinementEnv]) -> dict[str, dict]:
    """Cross-fitted PPO for every ``--variants`` entry over the same folds and the same memoised outcomes."""
    from hyperrag.refinement.agreement import best_action_subset, reward_agreement, tune_weights
    from hyperrag.refinement.ppo import STOP

    position = {q.id: i for i, q in enumerate(ds.queries)}
    usable_set = set(usable)
    splits = []
    for fold in folds(ds.queries, args.folds, args.seed):
        held = [position[q.id] for q in fold if position[q.id] in usable_set]
        splits.append((held, [i for i in usable if i not in set(held)]))
    if args.max_folds:
        splits = splits[: args.max_folds]
        print(f"partial run: {args.max_folds} of {args.folds} folds, {sum(len(h) for h, _ in splits)} of "
              f"{len(usable)} questions scored", flush=True)
    results = {}
    for spec in args.variants.split(","):
        reading, action_spec = parse_variant(spec)
        base_env = readings[reading]
        tuned = READINGS[reading][1]
        scores: dict[str, dict[str, list[float | None]]] = {a: {m: [] for m in KEYS} for a in ARMS}
        per_fold, held_weights, train_seconds, order = [], {}, 0.0, []
        for f, (held, train) in enumerate(splits):
            if action_spec == "all":
                acts = list(env.actions)
            elif action_spec == "cv2":
                acts, _ = best_action_subset(base_env, train, 2)
            else:
                acts = action_spec.split("+")
            e = base_env if acts == list(base_env.actions) else base_env.derive(actions=acts)
            tuning = None
            if tuned:
                w, tuning = tune_weights(e, train)
                e = e.derive(weights=w)  # its own memo: the shared reading's λs stay untouched
            for i in held:
                held_weights[i] = e.weights
            L.seed_everything(args.seed + f, verbose=False)
            policy, iterations = ppo_model(int(e.states(train[:1], [()]).shape[1]), e.max_steps, args.seed + f,
                                           actions=(*e.actions, STOP))
            policy.attach(e, train, [])
            trainer = L.Trainer(max_epochs=args.max_iterations or iterations, logger=False,
                                enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                                accelerator="cpu")
            t1 = time.perf_counter()
            trainer.fit(policy, datamodule=RolloutDataModule(train, seed=args.seed + f))
            train_seconds += time.perf_counter() - t1
            ev = e.evaluate_policy(policy, held, select_ids=train)
            seqs = e.greedy_sequences(policy, held)
            best = ev["best_fixed_action"]
            fcr_train = {a: statistics.fmean(float(o["full_chain"] or 0.0)
                                             for o in e.outcomes(train, [(a,)] * len(train))) for a in env.actions}
            best_fcr = max(env.actions, key=lambda a: fcr_train[a])
            act_seqs = [(), *e.sequences()]
            outcome = {"ppo": e.outcomes(held, seqs), "best_fixed": e.outcomes(held, [(best,)] * len(held)),
                       "best_fixed_fcr": e.outcomes(held, [(best_fcr,)] * len(held)),
                       **{f"fixed_{a}": e.outcomes(held, [(a,)] * len(held)) for a in env.actions},
                       "no_refinement": e.outcomes(held, [()] * len(held)),
                       "oracle": [e.best_outcome(i) for i in held],
                       "ceiling": [max(e.outcomes([i] * len(every), every), key=lambda o: float(o["full_chain"] or 0))
                                   for i in held],
                       "ceiling_actions": [max(e.outcomes([i] * len(act_seqs), act_seqs),
                                               key=lambda o: float(o["full_chain"] or 0)) for i in held]}
            for arm, outs in outcome.items():
                for m, key in KEYS.items():
                    scores[arm][m] += [o[key] for o in outs]
            for m, key in KEYS.items():  # the uniformly random policy: exact expectation over its episodes
                scores["random"][m] += [e.random_value(i, key) if any(e.outcomes([i], [s])[0][key] is not None
                                                                      for s in e.sequences()) else None
                                        for i in held]
            order += held
            if args.out:  # every finished fold's per-question FCR@5 (a partial run keeps what finished)
                import json

                Path(f"{args.out}.{spec}.folds.json").write_text(json.dumps(
                    {"question_order": [ds.queries[i].id for i in order],
                     "fcr@5": {arm: scores[arm]["fcr@5"] for arm in ARMS}, "per_fold_actions": [e.actions]}))
            hist = policy.history
            curve = ({"sampled_reward_first": round(hist[0]["reward"], 4),
                      "sampled_reward_last10": round(statistics.fmean(r["reward"] for r in hist[-10:]), 4),
                      "greedy_train_reward_first": round(hist[0].get("train_greedy_reward", float("nan")), 4),
                      "greedy_train_reward_last": round(hist[-1].get("train_greedy_reward", float("nan")), 4)}
                     if hist else {})
            per_fold.append({"fold": f, "questions": len(held), "actions": e.actions, "weights": e.weights.__dict__,
                             "training_curve": curve,
                             "tuning": tuning, "ppo_reward": round(ev["policy_reward"], 4),
                             "random_reward": round(ev["random_reward"], 4), "best_fixed_action": best,
                             "best_fixed_fcr_action": best_fcr,
                             "best_fixed_reward": round(ev["best_fixed_reward"], 4),
                             "oracle_reward": round(ev["oracle_reward"], 4),
                             "policy_sequences": ev["policy_sequences"]})
            print(f"[{spec}] fold {f}: actions {e.actions} λ {e.weights.__dict__}  PPO {ev['policy_reward']:.3f}  "
                  f"random {ev['random_reward']:.3f}  best fixed by reward ({best}) {ev['best_fixed_reward']:.3f}  "
                  f"by FCR@5 on train: {best_fcr}  {ev['policy_sequences']}  training reward {curve}", flush=True)
        results[spec] = summarise(spec, scores, per_fold, train_seconds)
        results[spec]["arm_values"] = {arm: {"fcr@5": scores[arm]["fcr@5"]} for arm in ARMS}  # per question, in
        results[spec]["question_order"] = [ds.queries[i].id for i in order]  # this order (paired re-analysis)
        # the reward's agreement with FCR@5 on the held-out questions, each under its own fold's λs and actions
        agree_env = base_env if action_spec == "all" else None
        if agree_env is not None:
            results[spec]["agreement_heldout"] = reward_agreement(agree_env, order, weights=held_weights)
            print(f"[{spec}] reward vs ΔFCR@5 on held-out questions (cross-fitted λ): "
                  f"{results[spec]['agreement_heldout']}", flush=True)
        if args.out:  # what has finished so far, should a later variant not
            import json

            Path(args.out + ".partial.json").write_text(json.dumps(results, default=str))
    return results


def summarise(spec: str, scores: dict[str, dict[str, list[float | None]]], per_fold: list[dict], train_seconds: float
              ) -> dict:
    """Per arm mean [95 %], PPO − every arm (paired), PPO's share of the ceiling's headroom over each baseline."""
    out: dict = {"per_fold": per_fold, "train_seconds": round(train_seconds, 1)}
    for arm in ARMS:
        out[arm] = {}
        for m, values in scores[arm].items():
            vals = [float(v) for v in values if v is not None]
            if not vals:
                continue
            ci = mean_interval(vals, scale=1.0 if m in ("reward", "relevance") else 100.0)
            out[arm][m] = round(ci.estimate, 4)
            out[arm][f"{m}_ci"] = ci.text(3 if m in ("reward", "relevance") else 1)
        print(f"[{spec}] {arm:>16}: " + "  ".join(f"{m} {out[arm][m + '_ci']}" for m in KEYS
                                                  if m + "_ci" in out[arm]))
    paired: dict[str, dict[str, str]] = {}
    for arm in ARMS[1:]:
        paired[arm] = {}
        for m in KEYS:
            pairs = [(a, b) for a, b in zip(scores["ppo"][m], scores[arm][m]) if a is not None and b is not None]
            if len(pairs) < 2:
                continue
            cmp = paired_comparison([float(a) for a, _ in pairs], [float(b) for _, b in pairs],
                                    scale=1.0 if m in ("reward", "relevance") else 100.0)
            paired[arm][m] = (f"{cmp.difference.text(3 if m in ('reward', 'relevance') else 1)} "
                              f"p={cmp.p_value:.3f}{' shown' if cmp.shown else ''}")
        print(f"[{spec}] PPO − {arm:>16}: " + "  ".join(f"{m} {v}" for m, v in paired[arm].items()))
    out["ppo_minus"] = paired
    out["capture"] = {}
    for base in ("fixed_decompose", "fixed_expand", "best_fixed_fcr", "best_fixed"):
        cap = headroom_capture(scores, base)
        rows = [(p, b, c) for p, b, c in zip(scores["ppo"]["fcr@5"], scores[base]["fcr@5"],
                                             scores["ceiling"]["fcr@5"]) if None not in (p, b, c)]
        _, ci = share_interval(*([float(r[k]) for r in rows] for k in range(3)))
        cap["share_ci95"] = ci
        out["capture"][base] = cap
        print(f"[{spec}] PPO's share of the ceiling's FCR@5 headroom over {base}: {cap}", flush=True)
    return out


if __name__ == "__main__":
    main()
