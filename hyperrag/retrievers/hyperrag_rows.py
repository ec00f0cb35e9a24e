"""What HyperRAG's Poincaré ball adds, from one streaming run: every row of both retrieval scopes on the same questions.

Under ``protocol: streaming`` every prediction keeps, in ``details["no_ball"]``, the rankings of the same question
without the ball (:meth:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever.no_ball_rows`) and, in
``details["ball_rows"]``, the ball's own single-step rankings trained and untrained under both scopes
(:meth:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever.ball_rows`). The rows, by scope (:data:`SCOPES`):

* ``corpus`` (§3.2, every passage): dense; dense + the same feedback rounds; the untrained ball (the projected
  starting points, epoch 0); the trained ball;
* ``query_graph`` (§2, the question's ``V_i`` first): ``V_i`` by selection order, by cosine, by the feedback
  rounds' best cosine (each then the rest); the untrained ball; the trained ball.

This module writes each row as a run directory of its own (``RUN_DIR/rows/<row>/``: ``predictions.jsonl``,
``metrics.json`` with the run's labels and ``"row"``), so ``report.py`` and ``python -m hyperrag.eval.intervals``
read them like any run, and prints every row's figures with 95% intervals and, per scope, the trained ball's paired
difference against every other row of the scope — trained − untrained is what training adds on the same candidates
(:mod:`hyperrag.eval.per_query`). In a multi-step run the run's own ranking (the ``ball`` row) is multi-step and
the rows single-step, so its ``ball − row`` differences compare the multi-step ball with each single-step no-ball
row. A multi-step run also keeps, per multi-step question, ``details["multi_rows"]``: its own sub-question texts
ranked by the trained and the untrained ball under both scopes and by the no-ball rows ``dense`` and
``graph_dense``, merged as the run merges them — the scopes ``multi_corpus`` / ``multi_query_graph`` compare
multi-step with multi-step (a question routed to one step takes its single-step rows). Their untrained rows reuse
the trained run's sub-question texts; the untrained arm with its own intermediate answers is a run with
``train.max_epochs=0`` scored against it (``python -m hyperrag.eval.intervals``). ``graph_dense`` is the
*matched* no-ball row (:data:`MATCHED`): it is fed what the ball is fed (the question and ``V_i``; multi-step:
``multi_graph_dense``, the sub-questions too); the feedback rows read the feedback queries' text, which under the
oracle are the gold sub-questions with earlier hops' gold answers filled in, text the ball never sees.

    python -m hyperrag.retrievers.hyperrag_rows RUN_DIR [--metrics recall@5,fcr@5]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError

#: row key in ``details["no_ball"]`` / ``details["ball_rows"]`` → its label
ROWS = {"dense": "dense",
        "dense_feedback": "dense + the feedback rounds' query texts (reads text the ball never sees; under the "
                          "oracle: gold sub-questions with earlier hops' gold answers)",
        "graph_selection": "query graph's passages, selection order (no ball)",
        "graph_dense": "query graph's passages, dense order (no ball; matched: fed the question and V_i, as the ball)",
        "graph_feedback": "query graph's passages, feedback-round cosine order (no ball; reads the feedback "
                          "queries' text the ball never sees)"}
#: the no-ball row fed what the ball is fed — the question and the query graph's passages V_i, no feedback text
MATCHED = "graph_dense"
BALL_ROWS = {"untrained_corpus": "untrained ball, corpus (projection only, epoch 0)",
             "trained_corpus": "trained ball, corpus",
             "untrained_query_graph": "untrained ball, V_i first (projection only, epoch 0)",
             "trained_query_graph": "trained ball, V_i first"}
#: multi-step rows (``details["multi_rows"]``, :meth:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever.multi_rows`):
#: the run's own sub-question texts ranked by every row and merged as the run merges them; a question routed to one
#: step takes its single-step rows. The untrained rows reuse the trained run's sub-question texts.
MULTI_ROWS = {"multi_trained_corpus": "multi-step: trained ball, corpus",
              "multi_trained_query_graph": "multi-step: trained ball, V_i first",
              "multi_untrained_corpus": "multi-step: untrained ball, corpus (epoch 0, the run's sub-questions)",
              "multi_untrained_query_graph": "multi-step: untrained ball, V_i first (epoch 0, the run's "
                                             "sub-questions)",
              "multi_dense": "multi-step: dense (each sub-question and the question by cosine; no ball)",
              "multi_graph_dense": "multi-step: V_i by cosine to each sub-question and the question, then dense "
                                   "(no ball; matched: fed the question, its sub-questions and V_i, as the ball)"}
MULTI_MATCHED = "multi_graph_dense"
#: per scope: its rows (the trained ball last), the untrained ball, the no-ball rows and the matched one
SCOPES = {"corpus": {"trained": "trained_corpus", "untrained": "untrained_corpus",
                     "no_ball": ("dense", "dense_feedback", MATCHED), "matched": MATCHED},
          "query_graph": {"trained": "trained_query_graph", "untrained": "untrained_query_graph",
                          "no_ball": ("graph_selection", "graph_dense", "graph_feedback"), "matched": MATCHED},
          "multi_corpus": {"trained": "multi_trained_corpus", "untrained": "multi_untrained_corpus",
                           "no_ball": ("multi_dense", MULTI_MATCHED), "matched": MULTI_MATCHED},
          "multi_query_graph": {"trained": "multi_trained_query_graph", "untrained": "multi_untrained_query_graph",
                                "no_ball": (MULTI_MATCHED,), "matched": MULTI_MATCHED}}
BALL = "ball, the run's ranking (projected question, hyperbolic distance)"
BALL_MULTI = "ball, the run's multi-step ranking (sub-questions' rankings interleaved)"
#: the run's labels copied to every row
_LABELS = ("llm_kind", "llm_label", "protocol", "models", "transductive")


def write_rows(run_dir: str | Path, predictions: list[dict[str, Any]] | None = None) -> dict[str, Path]:
    """Write ``RUN_DIR/rows/<row>/`` for every no-ball row of a streaming run; returns ``{row: folder}``.
    ``predictions``: the rows of its ``predictions.jsonl`` when the caller has read them already.

    Raises:
        InputError: the run has no predictions, or they carry no ``no_ball`` rows (not a streaming HyperRAG run).
    """
    from hyperrag.eval.retrieval import retrieval_metrics
    from hyperrag.eval.runs import PREDICTIONS, read_json_file, read_predictions
    from hyperrag.utils.atomic import atomic_write_json, atomic_write_jsonl

    run_dir = Path(run_dir)
    path = run_dir / PREDICTIONS
    if not path.is_file():
        raise InputError("no predictions.jsonl here", path=run_dir)
    rows = read_predictions(path) if predictions is None else predictions
    missing = [r["id"] for r in rows if not isinstance((r.get("details") or {}).get("no_ball"), dict)]
    if missing:
        raise InputError(f"{len(missing)} of {len(rows)} predictions have no details.no_ball rows (first: "
                         f"{missing[0]}); they come from method=hyperrag method.retriever.protocol=streaming, or a "
                         "transductive run that built its ball (method.retriever.retrain=true)",
                         path=path)
    record = read_json_file(run_dir / "metrics.json") if (run_dir / "metrics.json").is_file() else {}
    metrics = (record.get("metrics") if isinstance(record, dict) else None) or {}
    ks = tuple(sorted({int(k.split("@", 1)[1]) for k in metrics if k.startswith("recall@")})) or (2, 5, 10)
    out: dict[str, Path] = {}
    multi = any("multi_rows" in r["details"] for r in rows)

    def ranking(r: dict[str, Any], key: str) -> list[str] | None:
        det = r["details"]
        if key in MULTI_ROWS:
            if "multi_rows" in det:
                return det["multi_rows"].get(key.removeprefix("multi_"))
            key = key.removeprefix("multi_")  # routed to one step: its single-step rows
        return (det.get("ball_rows") or {}).get(key) if key in BALL_ROWS else det["no_ball"].get(key)

    for key, label in {**ROWS, **BALL_ROWS, **(MULTI_ROWS if multi else {})}.items():
        if any(ranking(r, key) is None for r in rows):
            continue  # a run from before this row existed
        folder = run_dir / "rows" / key
        folder.mkdir(parents=True, exist_ok=True)
        derived = [{"id": r["id"], "question": r.get("question", ""), "ranked_ids": ranking(r, key),
                    "scores": [-float(i) for i in range(len(ranking(r, key)))],
                    "gold_ids": r.get("gold_ids", []), "answers": r.get("answers", [])} for r in rows]
        atomic_write_jsonl(folder / PREDICTIONS, derived)
        scored = retrieval_metrics([r["ranked_ids"] for r in derived], [r["gold_ids"] for r in derived], ks)
        scored["queries"] = len(derived)
        scored.update({k: metrics[k] for k in _LABELS if k in metrics})
        scored["row"] = label
        kind = "ball" if key in BALL_ROWS or "trained" in key else "no ball"
        atomic_write_json(folder / "metrics.json", {"dataset": record.get("dataset"), "method": f"{key} ({kind})",
                                                   "derived_from": str(run_dir), "metrics": scored})
        out[key] = folder
    return out


def compare_rows(run_dir: str | Path, metrics: Sequence[str] = ("recall@2", "recall@5", "fcr@2", "fcr@5")
                 ) -> dict[str, Any]:
    """Every row's intervals; the run's ball against each no-ball row; per scope, its trained ball against every
    other row of the scope (the untrained ball and the best no-ball row included).

    Returns ``{"rows": {label: {metric: Interval}}, "ball_minus": {label: {metric: PairedComparison}},
    "scopes": {scope: {"trained_minus": {label: {metric: PairedComparison}}, "best_no_ball": {metric: label}}}}``.
    """
    from hyperrag.eval.per_query import run_per_query
    from hyperrag.eval.runs import PREDICTIONS, read_predictions

    path = Path(run_dir) / PREDICTIONS
    preds = read_predictions(path) if path.is_file() else None  # read once (write_rows says when it is missing)
    folders = write_rows(run_dir, preds)
    labels = {**ROWS, **BALL_ROWS, **MULTI_ROWS}
    ball = run_per_query(run_dir, name="ball", predictions=preds)
    assert preds is not None
    multi = sum("sub_questions" in (r.get("details") or {}) for r in preds)
    ball_label = BALL_MULTI if multi else BALL
    runs = {k: run_per_query(f, name=k) for k, f in folders.items()}
    out: dict[str, Any] = {"rows": {}, "ball_minus": {}, "scopes": {}, "multi_step_questions": multi,
                           "ball_label": ball_label}
    for key, run in runs.items():
        out["rows"][labels[key]] = {m: run.interval(m) for m in metrics if m in run.values}
    out["rows"][ball_label] = {m: ball.interval(m) for m in metrics if m in ball.values}
    for key, label in ROWS.items():
        if key in runs:
            out["ball_minus"][label] = {m: ball.compare(runs[key], m) for m in metrics
                                        if m in runs[key].values and m in ball.values}
    for scope, spec in SCOPES.items():
        if spec["trained"] not in runs:
            continue
        trained = runs[spec["trained"]]
        others = [spec["untrained"], *spec["no_ball"]]
        res: dict[str, Any] = {"trained_minus": {}, "best_no_ball": {}}
        for key in others:
            if key in runs:
                res["trained_minus"][labels[key]] = {m: trained.compare(runs[key], m) for m in metrics
                                                     if m in runs[key].values and m in trained.values}
        for m in metrics:
            means = {k: runs[k].interval(m).estimate for k in spec["no_ball"] if k in runs and m in runs[k].values}
            if means:
                res["best_no_ball"][m] = labels[max(means, key=lambda k: means[k])]
        res["matched"] = labels[spec["matched"]]
        out["scopes"][scope] = res
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
            print(f"{res['ball_label'].split(',')[0]} ({res['multi_step_questions']} multi-step) − {label}\n" + "\n".join(f"  {m:>9}: {c.verdict('ball', 'row')}" for m, c in vals.items()))
        for scope, got in res["scopes"].items():
            print(f"== scope {scope}: matched row: {got['matched']}; best no-ball row "
                  + ", ".join(f"{m}: {v}" for m, v in got["best_no_ball"].items()))
            for label, vals in got["trained_minus"].items():
                print(f"trained − {label}\n" + "\n".join(f"  {m:>9}: {c.verdict('trained', 'row')}"
                                                          for m, c in vals.items()))
        return 0

    return run()


if __name__ == "__main__":
    raise SystemExit(main())
