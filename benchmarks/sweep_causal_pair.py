"""Sweep of the causal pair classifier's training settings, chosen by held-out macro F1 (never by test).

    python benchmarks/sweep_causal_pair.py --out DIR [--grid default|FILE.json] [--worker I --workers W]
    python benchmarks/sweep_causal_pair.py --summary DIR [--max-steps N]   # table + choice from DIR/heldout.jsonl

Each setting is fitted with the real :class:`~hyperrag.causal.classifier.CausalPairClassifier` and
:class:`~hyperrag.causal.datamodule.PairDataModule` in a plain loop that does what ``train.py task=causal_pair``'s
Lightning fit does (AdamW, linear warm-up and decay over ``max_steps``, the same batches), on the GPU when there is
one. Every ``every`` steps it scores the held-out part of train (F1 per corpus, macro F1) → ``heldout.jsonl``, and,
in a separate file that the choice never reads, the test splits → ``test.jsonl`` (so the test figure of whatever
the held-out choice picks can be looked up afterwards). ``--summary`` reads ``heldout.jsonl`` only: per setting the
mean over seeds of the held-out macro F1 at the pass the fit would select (passes every ``--val-every`` steps);
the choice is the best of the settings whose fit is at most ``--max-steps`` steps (the CPU budget).
Workers split the grid (``--worker i --workers W``: settings i, i+W, ...) and append to the same files.

The issue 18 sweep (16 settings × seeds 0, 1; 32 fits on one H100, 16 workers, ~7 min) is
``reports/causal_pair_sweep/``. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CORPORA = ["altlex", "because", "ctb", "semeval2010t8"]


def default_grid() -> list[dict]:
    """The issue 18 grid: one change at a time around 1000 steps, corpus sampling 0.5, frozen embeddings."""
    def c(name: str, steps: int, cs: float, pb: str, fe: bool, fl: int, lr: float) -> dict:
        return {"name": name, "steps": steps, "cs": cs, "pb": pb, "fe": fe, "fl": fl, "lr": lr, "every": 100}

    base = [c("base600", 600, 1.0, "sqrt", False, 0, 1e-4), c("s1000", 1000, 1.0, "sqrt", False, 0, 1e-4),
            c("s1000_cs.5", 1000, 0.5, "sqrt", False, 0, 1e-4),
            c("s1000_cs.5_pbnone", 1000, 0.5, "none", False, 0, 1e-4),
            c("s1000_cs.5_fe", 1000, 0.5, "sqrt", True, 0, 1e-4), c("s1000_cs.5_fl2", 1000, 0.5, "sqrt", True, 2, 1e-4),
            c("s1000_cs.5_fe_lr2e-4", 1000, 0.5, "sqrt", True, 0, 2e-4),
            c("s1000_cs.5_fe_lr5e-5", 1000, 0.5, "sqrt", True, 0, 5e-5),
            c("s1400_cs.5_fe", 1400, 0.5, "sqrt", True, 0, 1e-4), c("s1000_cs0_fe", 1000, 0.0, "sqrt", True, 0, 1e-4),
            c("s1000_cs.5_fe_pbnone", 1000, 0.5, "none", True, 0, 1e-4),
            c("s1400_cs.5_fl2", 1400, 0.5, "sqrt", True, 2, 1e-4), c("s800_cs.5_fe", 800, 0.5, "sqrt", True, 0, 1e-4),
            c("s1000_cs.5_fe_pbfull", 1000, 0.5, "full", True, 0, 1e-4),
            c("s1400_cs.5_fe_lr2e-4", 1400, 0.5, "sqrt", True, 0, 2e-4),
            c("s1000_fe", 1000, 1.0, "sqrt", True, 0, 1e-4)]
    return [dict(g, seed=s) for s in (0, 1) for g in base]


def f1_per_corpus(model, examples) -> dict[str, float]:
    """F1 of the causal class per corpus at threshold 0.5."""
    import torch

    from hyperrag.causal.classifier import binary_prf

    texts = [e.text for e in examples]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i].split()))  # little padding, same result
    p = model.predict_proba([texts[i] for i in order], batch_size=128)
    prob = torch.empty_like(p)
    prob[torch.tensor(order)] = p
    gold = torch.tensor([e.label for e in examples])
    out = {}
    for corpus in sorted({e.corpus for e in examples}):
        idx = torch.tensor([i for i, e in enumerate(examples) if e.corpus == corpus])
        out[corpus] = binary_prf((prob[idx] >= 0.5).long(), gold[idx])["f1"]
    return out


def fit(cfg: dict, data, encoder: str, device: str) -> tuple[list[dict], list[dict], float, int, int]:
    """One setting: held-out rows, test rows (one per pass), seconds, train / held-out sizes."""
    import torch

    from hyperrag.causal.classifier import CausalPairClassifier
    from hyperrag.causal.datamodule import PairDataModule

    torch.manual_seed(cfg["seed"])
    dm = PairDataModule(data.train, val_fraction=0.1, val_max_per_corpus=250, batch_size=cfg.get("batch", 32),
                        length_encoder=encoder,
                        positive_balance=cfg["pb"], corpus_sampling=cfg["cs"], seed=cfg["seed"])
    from hyperrag.config.compose import task_arguments

    model = CausalPairClassifier(**task_arguments(
        "causal_pair", encoder=encoder, lr=cfg["lr"], head_lr=cfg.get("head_lr", 1e-3), max_length=128,
        max_steps=cfg["steps"], warmup=cfg.get("warmup", 0.06), freeze_embeddings=cfg["fe"],
        freeze_layers=cfg["fl"])).float().to(device)
    conf = model.configure_optimizers()
    opt, sched = conf["optimizer"], conf["lr_scheduler"]["scheduler"]
    test = [e for split in data.test.values() for e in split]
    step, start = 0, time.time()
    held_rows, test_rows = [], []
    while step < cfg["steps"]:
        for texts, labels, _, weight in dm.train_dataloader():
            logits = model(**model.tokenize(texts))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels.float().to(device),
                                                                        weight=weight.to(device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if step % cfg["every"] == 0:
                held = f1_per_corpus(model, dm.val_examples)
                held_rows.append({"step": step, "macro": sum(held.values()) / len(held), **held})
                test_rows.append({"step": step, **f1_per_corpus(model, test)})
                model.train()
            if step >= cfg["steps"]:
                break
    return held_rows, test_rows, time.time() - start, len(dm.train_idx), len(dm.val_idx)


def summary(folder: Path, val_every: int) -> dict:
    """Per setting, the mean over seeds of the held-out macro F1 at the selected pass (heldout.jsonl only)."""
    by_name: dict[str, list[dict]] = defaultdict(list)
    steps: dict[str, int] = {}
    for line in (folder / "heldout.jsonl").read_text().splitlines():
        row = json.loads(line)
        passes = [p for p in row["passes"] if p["step"] % val_every == 0]
        by_name[row["cfg"]["name"]].append(max(passes, key=lambda p: p["macro"]))
        steps[row["cfg"]["name"]] = row["cfg"]["steps"]
    table = {name: {"heldout_macro_f1": round(100 * sum(p["macro"] for p in sel) / len(sel), 1), "steps": steps[name],
                    **{f"heldout_{c}": round(100 * sum(p[c] for p in sel) / len(sel), 1) for c in CORPORA},
                    "selected_steps": [p["step"] for p in sel], "seeds": len(sel)}
             for name, sel in by_name.items()}
    return dict(sorted(table.items(), key=lambda kv: -kv[1]["heldout_macro_f1"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder for heldout.jsonl / test.jsonl")
    ap.add_argument("--grid", default="default", help="'default' or a JSON list of settings")
    ap.add_argument("--worker", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", "../shared/data") + "/unicausal")
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--summary", type=Path, help="print the held-out table of a finished sweep folder")
    ap.add_argument("--val-every", type=int, default=200, help="--summary: selection passes every N steps")
    ap.add_argument("--max-steps", type=int, default=None, help="--summary: choose among fits of at most N steps")
    args = ap.parse_args()
    if args.summary:
        table = summary(args.summary, args.val_every)
        for name, row in table.items():
            print(f"{name:24s} {row['heldout_macro_f1']:5.1f}  " +
                  " ".join(f"{c[:6]} {row[f'heldout_{c}']:5.1f}" for c in CORPORA) + f"  steps {row['selected_steps']}")
        affordable = [n for n, row in table.items() if args.max_steps is None or row["steps"] <= args.max_steps]
        print(json.dumps({"chosen": affordable[0] if affordable else None, "max_steps": args.max_steps,
                          "best_overall": next(iter(table)), "table": table}))
        return
    import torch

    from hyperrag.data.unicausal import unicausal_dataset

    grid = default_grid() if args.grid == "default" else json.loads(Path(args.grid).read_text())
    torch.set_num_threads(1)  # several workers share the host's cores
    device = "cuda" if torch.cuda.is_available() else "cpu"
    data = unicausal_dataset(args.data, CORPORA, ["esl2"])
    args.out.mkdir(parents=True, exist_ok=True)
    done = 0
    for i, cfg in enumerate(grid):
        if i % args.workers != args.worker:
            continue
        held, test, seconds, n_train, n_held = fit(cfg, data, args.encoder, device)
        with (args.out / "heldout.jsonl").open("a") as f:
            f.write(json.dumps({"cfg": cfg, "secs": round(seconds, 1), "train": n_train, "heldout": n_held,
                                "passes": held}) + "\n")
        with (args.out / "test.jsonl").open("a") as f:
            f.write(json.dumps({"cfg": cfg, "passes": test}) + "\n")
        done += 1
    print(json.dumps({"worker": args.worker, "fits": done, "device": device}))


if __name__ == "__main__":
    main()
