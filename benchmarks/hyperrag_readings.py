"""HyperRAG's readings side by side (issue 37): each streaming run's rows for both scopes, movement, and a 5-fold
cross-validated choice among the readings.

Each ``NAME=RUN_DIR`` is one streaming run of ``experiment=hyperrag_paper`` with ``method.retriever.multi_step=false``
(one reading: optimiser, epochs, batch size, init radius, ...). For every run this prints, per scope (``corpus``,
``query_graph``), every row's R@5 / FCR@5 with its 95% interval and the trained ball's paired differences against the
untrained ball (same candidates) and the scope's best no-ball row (:mod:`hyperrag.retrievers.hyperrag_rows`), beside
the training's steps and movement (``metrics.json``); ``--matched`` prints one line per run instead: per scope the
trained ball's R@5, its paired difference against the untrained ball and against the matched no-ball row
(``graph_dense``, fed what the ball is fed), and trained − matched at R@2 / FCR@5. ``--cv`` then picks a reading by 5-fold cross-validation over
the questions: on 4 folds the (run, scope) whose trained ball has the best mean ``--metric``, scored on the 5th — every
question scored by a choice made without it; the cross-validated figure and its paired differences (against the same
questions' untrained ball and best no-ball row of the chosen scope) carry 95% intervals.

    python benchmarks/hyperrag_readings.py riem3=/tmp/runs/riem3 adam3=/tmp/runs/adam3 --cv --metric recall@5
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hyperrag.eval.folds import split_folds
from hyperrag.eval.intervals import mean_interval, paired_comparison
from hyperrag.eval.per_query import run_per_query
from hyperrag.retrievers.hyperrag_rows import BALL_ROWS, MULTI_ROWS, ROWS, SCOPES, write_rows

METRICS = ("recall@2", "recall@5", "fcr@2", "fcr@5")


def movement(run: Path) -> dict[str, Any]:
    """Steps and movement of a run's training (``metrics.json``)."""
    rec = json.loads((run / "metrics.json").read_text())
    st = rec.get("streaming", {})
    return {"optimizer": rec.get("optimizer"), "fit_steps": rec.get("fit_steps"),
            "index_moved": rec.get("mean_distance_to_init"), "steps_per_update": st.get("mean_steps_per_update"),
            "moved_per_update": st.get("mean_moved_per_update"), "moved_total": st.get("mean_distance_to_init"),
            "llm": rec["metrics"].get("llm_label")}


def load(run: Path) -> dict[str, Any]:
    """``{row key: RunValues}`` of one run (its rows written first)."""
    folders = write_rows(run)
    return {k: run_per_query(f, name=k) for k, f in folders.items()}


def fmt(iv: Any) -> str:
    return iv.text()


def report(name: str, run: Path, rows: dict[str, Any]) -> list[str]:
    mv = movement(run)
    out = [f"### {name} ({run})", "", f"training: {mv}", ""]
    labels = {**ROWS, **BALL_ROWS, **MULTI_ROWS}
    for scope, spec in SCOPES.items():
        if spec["trained"] not in rows:
            continue  # a single-step run has no multi-step rows
        keys = [*spec["no_ball"], spec["untrained"], spec["trained"]]
        if scope == "query_graph":
            keys = ["dense", "dense_feedback", *keys]  # the corpus rows, for reference
        out += [f"scope **{scope}**", "", "| row | " + " | ".join(METRICS) + " |", "|---|" + "---|" * len(METRICS)]
        for k in dict.fromkeys(keys):
            if k in rows:
                out.append(f"| {labels[k]} | " + " | ".join(fmt(rows[k].interval(m)) for m in METRICS) + " |")
        trained = rows[spec["trained"]]
        for m in METRICS:
            best = max(spec["no_ball"], key=lambda k: rows[k].interval(m).estimate)
            for other, label in ((spec["untrained"], "untrained"), (spec["matched"], f"matched ({spec['matched']})"),
                                 (best, f"best no-ball ({best})")):
                c = trained.compare(rows[other], m)
                out.append(f"| trained − {label}, {m} | {c.verdict('trained', 'row')} |")
        out.append("")
    return out


def compact(runs: dict[str, dict[str, Any]], paths: dict[str, Path]) -> list[str]:
    """One line per run (Fig. 3 right): movement beside R@5 / FCR@5 of the untrained and trained ball per scope,
    and trained − untrained (R@5) with its interval."""
    out = [("| run | optimizer | steps / update | moved / update | moved (index + stream) | untrained, corpus | "
            "trained, corpus | trained − untrained, corpus R@5 | untrained, V_i first | trained, V_i first | "
            "trained − untrained, V_i R@5 |"), "|---|" + "---|" * 10]
    for name, rows in runs.items():
        mv = movement(paths[name])
        cells = [name, str(mv["optimizer"]), str(mv["steps_per_update"]), str(mv["moved_per_update"]),
                 str(mv["moved_total"])]
        for spec in (SCOPES["corpus"], SCOPES["query_graph"]):
            u, t = rows[spec["untrained"]], rows[spec["trained"]]
            cells += [f"{u.interval('recall@5').estimate:.1f} / {u.interval('fcr@5').estimate:.1f}",
                      f"{t.interval('recall@5').text()} / {t.interval('fcr@5').text()}",
                      t.compare(u, "recall@5").difference.text() + f" (p={t.compare(u, 'recall@5').p_value:.2f})"]
        out.append("| " + " | ".join(cells) + " |")
    return out


def matched(runs: dict[str, dict[str, Any]]) -> list[str]:
    """One line per run: per single-step scope (V_i first, corpus) the trained ball's R@5 with its interval, trained −
    untrained and trained − the matched no-ball row (R@5, with interval and p), and trained − matched at R@2 and
    FCR@5 — every difference with its interval and sign-flip p."""
    out = [("| run | V_i first: trained R@5 | − untrained | − matched | − matched R@2 / FCR@5 | corpus: trained R@5 | "
            "− untrained | − matched | − matched R@2 / FCR@5 |"), "|---|" + "---|" * 8]

    def diff(c: Any) -> str:
        return f"{c.difference.text()} (p={c.p_value:.3f})"

    for name, rows in runs.items():
        cells = [name]
        for spec in (SCOPES["query_graph"], SCOPES["corpus"]):
            t, u, m = rows[spec["trained"]], rows[spec["untrained"]], rows[spec["matched"]]
            cells += [t.interval("recall@5").text(), diff(t.compare(u, "recall@5")), diff(t.compare(m, "recall@5")),
                      " / ".join(diff(t.compare(m, k)) for k in ("recall@2", "fcr@5"))]
        out.append("| " + " | ".join(cells) + " |")
    return out


def cross_validate(runs: dict[str, dict[str, Any]], metric: str, folds: int = 5, seed: int = 0,
                   select: str = "trained") -> list[str]:
    """5-fold choice of (run, scope) on 4 folds, scored on the 5th: by the trained ball's mean ``metric``
    (``select="trained"``) or by its mean gain over the scope's matched no-ball row (``select="gain"``). Every
    scope a run has is an option (a multi-step run's ``multi_*`` scopes too)."""
    options = [(name, scope) for name in runs for scope, spec in SCOPES.items()
               if all(spec[k] in runs[name] for k in ("trained", "untrained", "matched"))]
    first = runs[next(iter(runs))][SCOPES["corpus"]["trained"]]
    qids = sorted(first.values[metric])
    fold_of = {q: f for f, part in enumerate(split_folds(qids, folds, seed)) for q in part}
    picked, scored = [], {m: {} for m in METRICS}
    diffs: dict[str, dict[str, list[float]]] = {m: {"untrained": [], "matched no-ball": [], "best no-ball": []}
                                                for m in METRICS}
    for f in range(folds):
        train = [q for q in qids if fold_of[q] != f]
        test = [q for q in qids if fold_of[q] == f]

        def mean(name: str, scope: str, qs: list[str]) -> float:
            spec = SCOPES[scope]
            vals = runs[name][spec["trained"]].values[metric]
            base = runs[name][spec["matched"]].values[metric] if select == "gain" else dict.fromkeys(qs, 0.0)
            return sum(vals[q] - base[q] for q in qs) / len(qs)

        name, scope = max(options, key=lambda o: mean(*o, train))
        picked.append(f"fold {f + 1}: {name} / {scope}")
        spec = SCOPES[scope]
        rows = runs[name]
        for m in METRICS:
            best = max(spec["no_ball"], key=lambda k: sum(rows[k].values[m][q] for q in train))  # chosen on 4 folds
            for q in test:
                t = rows[spec["trained"]].values[m][q]
                scored[m][q] = t
                diffs[m]["untrained"].append(t - rows[spec["untrained"]].values[m][q])
                diffs[m]["matched no-ball"].append(t - rows[spec["matched"]].values[m][q])
                diffs[m]["best no-ball"].append(t - rows[best].values[m][q])
    by = metric if select == "trained" else f"{metric} gain over the matched row"
    out = [(f"5-fold cross-validated choice by {by} among {len(options)} (run, scope) options "
            f"({len(qids)} questions, seed {seed}):"), *picked, ""]
    for m in METRICS:
        iv = mean_interval(list(scored[m].values()))
        out.append(f"- {m}: {iv.text()}")
        for label, d in diffs[m].items():
            c = paired_comparison([x for x in d], [0.0] * len(d))
            out.append(f"  - trained − {label}: {c.verdict('trained', label)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="NAME=RUN_DIR")
    parser.add_argument("--cv", action="store_true")
    parser.add_argument("--compact", action="store_true", help="one line per run only (Fig. 3 right)")
    parser.add_argument("--matched", action="store_true",
                        help="one line per run: trained, − untrained and − the matched no-ball row per scope")
    parser.add_argument("--metric", default="recall@5")
    parser.add_argument("--select", choices=("trained", "gain"), default="trained",
                        help="CV criterion on the 4 folds: the trained ball's metric, or its gain over the matched row")
    args = parser.parse_args(argv)
    runs: dict[str, dict[str, Any]] = {}
    paths: dict[str, Path] = {}
    lines: list[str] = []
    for spec in args.runs:
        name, _, path = spec.partition("=")
        paths[name] = run = Path(path)
        runs[name] = load(run)
        if not (args.compact or args.matched):
            lines += report(name, run, runs[name])
    if args.matched:
        lines += matched(runs)
    if args.compact:
        lines += compact(runs, paths)
    if args.cv:
        lines += cross_validate(runs, args.metric, select=args.select)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
