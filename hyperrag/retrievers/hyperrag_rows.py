"""What HyperRAG's Poincaré ball adds, from one streaming run: the no-ball rows beside the ball's ranking.

Under ``protocol: streaming`` every prediction keeps, in ``details["no_ball"]``, the rankings of the same question
without the ball (:meth:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever.no_ball_rows`): dense; dense with the same
feedback rounds; the query graph's passages by selection order; the query graph's passages by dense score. This
module writes each of them as a run directory of its own (``RUN_DIR/rows/<row>/``: ``predictions.jsonl``,
``metrics.json`` with the run's labels and ``"row"``), so ``report.py`` and ``python -m hyperrag.eval.intervals``
read them like any run, and prints every row's figures with 95% intervals and the paired difference of the ball
against each row (:mod:`hyperrag.eval.per_query`).

    python -m hyperrag.retrievers.hyperrag_rows RUN_DIR [--metrics recall@5,fcr@5]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError

#: row key in ``details["no_ball"]`` → its label
ROWS = {"dense": "dense", "dense_feedback": "dense + the same feedback rounds",
        "graph_selection": "query graph's passages, selection order (no ball)",
        "graph_dense": "query graph's passages, dense order (no ball)"}
BALL = "ball, paper rule (projected question, hyperbolic distance)"
#: the run's labels copied to every row
_LABELS = ("llm_kind", "llm_label", "protocol", "models", "transductive")


def write_rows(run_dir: str | Path) -> dict[str, Path]:
    """Write ``RUN_DIR/rows/<row>/`` for every no-ball row of a streaming run; returns ``{row: folder}``.

    Raises:
        InputError: the run has no predictions, or they carry no ``no_ball`` rows (not a streaming HyperRAG run).
    """
    from hyperrag.eval.retrieval import retrieval_metrics
    from hyperrag.eval.runs import PREDICTIONS, read_predictions
    from hyperrag.utils.atomic import atomic_write_json, atomic_write_jsonl

    run_dir = Path(run_dir)
    path = run_dir / PREDICTIONS
    if not path.is_file():
        raise InputError("no predictions.jsonl here", path=run_dir)
    rows = read_predictions(path)
    missing = [r["id"] for r in rows if not isinstance((r.get("details") or {}).get("no_ball"), dict)]
    if missing:
        raise InputError(f"{len(missing)} of {len(rows)} predictions have no details.no_ball rows (first: "
                         f"{missing[0]}); they come from method=hyperrag method.retriever.protocol=streaming",
                         path=path)
    record = json.loads((run_dir / "metrics.json").read_text()) if (run_dir / "metrics.json").is_file() else {}
    metrics = record.get("metrics", {})
    ks = tuple(sorted({int(k.split("@", 1)[1]) for k in metrics if k.startswith("recall@")})) or (2, 5, 10)
    out: dict[str, Path] = {}
    for key, label in ROWS.items():
        folder = run_dir / "rows" / key
        folder.mkdir(parents=True, exist_ok=True)
        derived = [{"id": r["id"], "question": r.get("question", ""), "ranked_ids": r["details"]["no_ball"][key],
                    "scores": [-float(i) for i in range(len(r["details"]["no_ball"][key]))],
                    "gold_ids": r.get("gold_ids", []), "answers": r.get("answers", [])} for r in rows]
        atomic_write_jsonl(folder / PREDICTIONS, derived)
        scored = retrieval_metrics([r["ranked_ids"] for r in derived], [r["gold_ids"] for r in derived], ks)
        scored["queries"] = len(derived)
        scored.update({k: metrics[k] for k in _LABELS if k in metrics})
        scored["row"] = label
        atomic_write_json(folder / "metrics.json", {"dataset": record.get("dataset"), "method": f"{key} (no ball)",
                                                   "derived_from": str(run_dir), "metrics": scored})
        out[key] = folder
    return out


def compare_rows(run_dir: str | Path, metrics: Sequence[str] = ("recall@2", "recall@5", "fcr@2", "fcr@5")
                 ) -> dict[str, Any]:
    """Every row's intervals and the ball's paired difference against each no-ball row.

    Returns ``{"rows": {label: {metric: Interval}}, "ball_minus": {label: {metric: PairedComparison}}}``.
    """
    from hyperrag.eval.per_query import run_per_query

    folders = write_rows(run_dir)
    ball = run_per_query(run_dir, name="ball")
    others = {ROWS[k]: run_per_query(f, name=k) for k, f in folders.items()}
    out: dict[str, Any] = {"rows": {}, "ball_minus": {}}
    for label, run in [*others.items(), (BALL, ball)]:
        out["rows"][label] = {m: run.interval(m) for m in metrics if m in run.values}
    for label, run in others.items():
        out["ball_minus"][label] = {m: ball.compare(run, m) for m in metrics if m in run.values and m in ball.values}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hyperrag.retrievers.hyperrag_rows RUN_DIR``: the rows of "what the ball adds"."""
    import argparse

    from hyperrag.errors import exit_on_input_error

    parser = argparse.ArgumentParser(prog="python -m hyperrag.retrievers.hyperrag_rows", description=main.__doc__)
    parser.add_argument("run", help="a streaming HyperRAG run directory")
    parser.add_argument("--metrics", default="recall@2,recall@5,fcr@2,fcr@5")
    args = parser.parse_args(argv)

    @exit_on_input_error
    def run() -> int:
        res = compare_rows(args.run, [m.strip() for m in args.metrics.split(",") if m.strip()])
        for label, vals in res["rows"].items():
            print(f"{label}\n" + "\n".join(f"  {m:>9}: {iv.text()}" for m, iv in vals.items()))
        for label, vals in res["ball_minus"].items():
            print(f"ball − {label}\n" + "\n".join(f"  {m:>9}: {c.verdict('ball', 'row')}" for m, c in vals.items()))
        return 0

    return run()


if __name__ == "__main__":
    raise SystemExit(main())
