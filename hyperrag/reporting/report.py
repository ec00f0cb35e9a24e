"""Build a report of runs: ``report.md`` (tables, best in bold) and PNG plots in one folder.

    from hyperrag.reporting.report import build_report
    path = build_report(["multirun/methods_musique"], "reports", name="methods_musique")
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError
from hyperrag.eval.intervals import EXACT_MAX_DIFFERING, interval_legend
from hyperrag.reporting.ceiling import ceiling_table, plot_ceiling
from hyperrag.reporting.collect import RunRecord, find_runs, latest_only, sort_key
from hyperrag.reporting.cost import add_api_cost, cost_table, has_cost, plot_recall_vs_cost
from hyperrag.reporting.paper_rows import data_text, paper_sections
from hyperrag.reporting.plots import numeric_sweep_keys, plot_bars, plot_grid, plot_recall_curves, plot_sweep
from hyperrag.reporting.provenance import printed_by_line, runs_predate_line
from hyperrag.reporting.published import PublishedTable, tables_for_experiment
from hyperrag.reporting.significance import oracle_read_metrics, paired_table, paired_tests
from hyperrag.reporting.snapshot import VALUES_FILE, load_values, save_values
from hyperrag.reporting.tables import comparison_table, present_metrics, runs_table

DEFAULT_METRICS = ("recall@2", "recall@5", "recall@10", "fcr@2", "fcr@5", "fcr@10", "context_recall", "em", "f1",
                   "jsr", "answer_relevancy", "answer_relevancy_emb", "groundedness", "groundedness_lexical",
                   "hallucination_rate", "hallucination_rate_lexical", "causal_coverage", "accuracy",
                   "context_relevance", "crc", "groundedness_span", "groundedness_emb", "ccd", "srs", "precision",
                   "recall")
TEST_METRICS = ("recall@2", "recall@5", "fcr@5", "em", "f1", "match_acc", "jsr", "accuracy", "judge_acc")
#: what a row's label tag means, for the report header
TAG_MEANINGS = {
    "LLM-free": "every LLM step replaced by the method's labelled LLM-free fallback",
    "upper bound (oracle)": "LLM decisions from the gold annotations (`llm=oracle`): an upper bound, never a model's result",
    "transductive": "the scored questions were seen at index time (trained into the method's artifacts)",
    "cross-fitted": "query-trained artifacts scored only on folds they never trained on",
    "substituted models": "a role's model differs from the one the paper names, or `models=offline` put the "
                          "embedded ones in every role (the ids used are listed below)",
    "streaming": "questions answered one at a time in arrival order, none seen before it arrives",
    "held-out graphs": "the scored questions' query graphs kept out of the index",
}
EFFICIENCY = ("index_seconds", "retrieve_seconds", "queries_per_second", "latency_seconds", "seed_latency_seconds",
              "edge_weighting_latency_seconds", "llm_calls_per_query", "answer_seconds", "api_cost_usd_per_1000_queries")


def default_name(specs: Sequence[str], runs: Sequence[RunRecord]) -> str:
    """The report folder's name: the experiment the runs came from (``multirun/<experiment>/<stamp>``),
    else the first directory's name."""
    parents = {p for r in runs for p in r.path.parts}
    for part in ("multirun", "outputs", "runs"):
        if part in parents:
            after = {r.path.parts[r.path.parts.index(part) + 1] for r in runs
                     if part in r.path.parts and len(r.path.parts) > r.path.parts.index(part) + 1}
            if len(after) == 1:
                return after.pop()
    return Path(str(specs[0]).rstrip("/*")).name or "report"


def build_report(specs: str | Sequence[str], out: str | Path = "reports", name: str | None = None,
                 metrics: Sequence[str] = DEFAULT_METRICS, plot_metrics: Sequence[str] = ("recall@5", "fcr@5"),
                 keep_latest: bool = True, title: str | None = None, test_metrics: Sequence[str] = TEST_METRICS,
                 methods: Sequence[str] | None = None, experiment: str | None = None,
                 token_prices: tuple[float, float] | None = None, equivalence_margin: float | None = None) -> Path:
    """Gather the runs under ``specs`` and write ``<out>/<name>/report.md`` plus its PNGs. Returns report.md.

    Every mean over queries carries its 95% interval (Wilson for 0/1 metrics, BCa bootstrap otherwise; from the
    run's ``predictions.jsonl``), and every
    tested row (``methods``; see :mod:`hyperrag.reporting.significance`) a paired test against the strongest
    baseline on ``test_metrics``. The published tables of ``experiment`` (default: the report's name) come beside
    ours as ``paper (published)`` rows with the differences (:mod:`hyperrag.reporting.paper_rows`)."""
    specs = [specs] if isinstance(specs, str) else [str(s) for s in specs]
    runs = find_runs(specs)
    if not runs:
        raise InputError("no retrieval runs (metrics.json) found", path=", ".join(specs))
    runs = latest_only(runs) if keep_latest else sorted(runs, key=sort_key)
    name = name or default_name(specs, runs)
    folder = Path(out) / name
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"specs": specs, "name": name, "metrics": list(metrics), "plot_metrics": list(plot_metrics),
                "title": title, "test_metrics": list(test_metrics), "methods": None if methods is None else
                list(methods), "experiment": experiment,
                "token_prices": None if token_prices is None else list(token_prices),
                "equivalence_margin": equivalence_margin}
    save_values(folder, runs, settings)
    return render_report(runs, folder, settings)


def reprint_report(folder: str | Path) -> Path:
    """Re-print ``<folder>/report.md`` (and its PNGs) from its committed ``values.json`` with today's code."""
    folder = Path(folder)
    settings, runs = load_values(folder / VALUES_FILE)
    return render_report(runs, folder, settings)


def reprint_all(out: str | Path = "reports") -> list[Path]:
    """Re-print every report under ``out`` that has its values (``<out>/*/values.json``); returns the reports."""
    return [reprint_report(v.parent) for v in sorted(Path(out).glob(f"*/{VALUES_FILE}"))]


def render_report(runs: list[RunRecord], folder: Path, settings: dict[str, Any]) -> Path:
    """Write ``<folder>/report.md`` and its PNGs for ``runs`` under the report's ``settings`` (the arguments of
    :func:`build_report`)."""
    specs, name, title = settings["specs"], settings["name"], settings.get("title")
    metrics, plot_metrics = settings["metrics"], settings["plot_metrics"]
    test_metrics, methods, experiment = settings["test_metrics"], settings.get("methods"), settings.get("experiment")
    prices = settings.get("token_prices")
    add_api_cost(runs, None if prices is None else (float(prices[0]), float(prices[1])))
    shown = present_metrics(runs, metrics)
    sources = ", ".join(f"`{s}`" for s in specs)
    intro = (f"{len(runs)} run(s) from {sources} — generated {time.strftime('%Y-%m-%d %H:%M')}. "
             f"Values in %, best per column in **bold**, with the {interval_legend()}.")
    sections = [f"# {title or name}", "", intro, "", printed_by_line(), ""]
    runs_line = runs_predate_line(runs)  # the runs' code against the tree's (provenance.runs_stale_reason)
    if runs_line:
        sections += [runs_line, ""]
    sections += obtained_lines(runs)
    sections += data_and_model_lines(runs, tables_for_experiment(experiment or name))
    commits = {r.commit for r in runs if r.commit}
    if commits:
        sections += [f"Runs' code: git {', '.join(sorted(c[:10] for c in commits))}.", ""]
    sections += ["## Results", "", comparison_table(runs, shown, intervals=True), ""]
    wanted_tests = present_metrics(runs, test_metrics)
    margin = settings.get("equivalence_margin")
    tests = paired_tests(runs, wanted_tests, methods, None if margin is None else float(margin))
    oracle_qa = oracle_read_metrics(runs, wanted_tests)
    if tests or oracle_qa:
        tested = ", ".join(sorted({t.row.method for t in tests})) or "none"
        sections += ["## Paired tests against the strongest baseline", "",
                     (f"Rows under test: {tested}. Δ = row − the strongest baseline of that dataset and metric "
                      "obtained as the row was (with the oracle or without it; the strongest of all only where none "
                      "was), over the queries both scored: mean difference [95% paired bootstrap interval], p = two-sided "
                      f"paired sign-flip test (exact: all 2^m flips of the m differing queries, m ≤ {EXACT_MAX_DIFFERING}; "
                      "MC: Monte "
                      "Carlo, 10,000 random flips), Holm = that p adjusted over all of this table's tests (the "
                      "baseline is picked after the fact and the metrics are correlated), and how many queries "
                      "differ. ✓ better: the interval excludes 0 and the Holm-adjusted p < 0.05; ✗ worse, likewise; "
                      "~ no difference shown (the interval includes 0); ~* no difference shown although the "
                      "interval excludes 0 (the adjusted test does not reject: too few queries differ, or too many "
                      "tests)." + ("" if margin is None else
                      f" ≡ ±{float(margin):g}: equivalent within ±{float(margin):g} points by two one-sided tests "
                      "(the paired difference's 90% bootstrap interval inside the margin); not ≡: no equivalence "
                      "shown — a difference not shown is not equivalence.")), ""]
        if oracle_qa:
            sections += [(f"Not tested: {', '.join(oracle_qa)} of the rows read by the oracle (`llm=oracle`). The "
                          "oracle answers from the gold whenever the evidence it is handed holds it, so these "
                          "columns measure evidence, not answers (for passage methods EM = F1 = JSR = FCR@k; graph "
                          "methods hand over items the oracle accepts by origin), and differ between methods in "
                          "how each hands over evidence, not in answering."), ""]
        if tests:
            sections += [paired_table(tests), ""]
    sections += paper_sections(experiment or name, runs)
    ceiling = ceiling_table(runs)
    if ceiling:
        sections += ["## Oracle ceiling", "", ("What a perfect model's LLM decisions (`llm=oracle`, an upper bound, "
                     "never a model's result) add to each method's LLM-free form; +0 means the LLM output does not "
                     "reach the ranking."), "", ceiling, ""]
    eff = present_metrics(runs, EFFICIENCY)
    if eff:
        sections += ["## Efficiency", "", comparison_table(runs, eff, digits=2), ""]
    if has_cost(runs):
        sections += ["## Cost", "", ("LLM calls and tokens (prompt + completion, the cached replies' original tokens "
                     "included: what an uncached run pays) per backend, for indexing and per 1,000 queries; wall "
                     "seconds; the index's size on disk."), "", cost_table(runs), ""]
    plots: list[tuple[str, Path | None]] = [
        ("recall@k curves", plot_recall_curves(runs, folder / "recall_at_k.png")),
        ("method comparison", plot_bars(runs, [m for m in plot_metrics if m in shown] or shown[:2],
                                        folder / "method_comparison.png")),
    ]
    if ceiling:
        plots.append(("oracle ceiling", plot_ceiling(runs, folder / "oracle_ceiling.png")))
    if has_cost(runs):
        plots.append(("recall against cost", plot_recall_vs_cost(runs, folder / "recall_vs_cost.png",
                                                                 (list(plot_metrics) or ["recall@5"])[0])))
    sweep_keys = numeric_sweep_keys(runs)
    short = [k.rsplit(".", 1)[-1] for k in sweep_keys]
    if len(sweep_keys) == 1:
        plots.append((f"sweep over {sweep_keys[0]}", plot_sweep(runs, sweep_keys[0], list(plot_metrics),
                                                                folder / f"sweep_{short[0]}.png")))
    elif len(sweep_keys) == 2:
        for m in plot_metrics:
            plots.append((f"{m} over {short[0]} × {short[1]}",
                          plot_grid(runs, sweep_keys, m, folder / f"grid_{short[0]}_{short[1]}_{m.replace('@', '')}.png")))
    elif any(r.variant for r in runs):
        plots.append(("ablation", plot_bars(runs, list(plot_metrics), folder / "ablation.png", title="ablation — ")))
    sections += ["## Plots", ""]
    sections += [f"![{label}]({p.name})" for label, p in plots if p is not None] + [""]
    sections += ["## Runs", "", runs_table(runs), ""]
    (folder / "report.md").write_text("\n".join(sections))
    (folder / "runs.json").write_text(json.dumps(
        [{"label": r.label, "method": r.method, "dataset": r.dataset, "variant": r.variant, "path": str(r.path),
          "group": r.group, "metrics": r.metrics} for r in runs], indent=1))
    return folder / "report.md"


def obtained_lines(runs: Sequence[RunRecord]) -> list[str]:
    """The header's legend: how the rows were obtained (each tag present among the rows, with its meaning)."""
    tags = list(dict.fromkeys(t for r in runs for t in r.tags))
    if not tags:
        return []
    lines = ["How the rows were obtained (the tags in each row's label):", ""]
    for tag in tags:
        meaning = next((v for k, v in TAG_MEANINGS.items() if tag.startswith(k)), None)
        if meaning is None and tag.startswith("reader: "):
            meaning = "the QA reader was another backend than the retrieval LLM"
        if meaning is None and tag.startswith("judge: "):
            meaning = "the LLM that judged evaluate.py's judged metrics (GPT-Acc, groundedness, context recall, ...)"
        lines.append(f"- **{tag}**: {meaning or 'model ' + tag}")
    return lines + [""]


def data_and_model_lines(runs: Sequence[RunRecord], tables: Sequence[PublishedTable] = ()) -> list[str]:
    """The header's data and model lines: what each dataset column scored (the stand-in's name, its query and
    passage counts beside the paper's, the digests) and the model id each role used beside the paper's."""
    lines: list[str] = []
    seen: dict[str, str] = {}
    for r in runs:
        if r.dataset in seen:
            continue
        table = next((t for t in tables if r.dataset in t.sizes), None)
        text = f"**{r.dataset}** = {data_text(r, table)}"
        data = r.labels.get("data") if isinstance(r.labels.get("data"), dict) else {}
        if data.get("queries_sha256"):
            text += f", queries sha256 {data['queries_sha256']}, corpus sha256 {data['corpus_sha256']}"
        seen[r.dataset] = text
    if seen:
        lines += ["Data (q = queries, p = passages; the paper's sizes where its table gives them):", ""]
        lines += [f"- {t}" for t in seen.values()] + [""]
    models: dict[str, list[str]] = {}
    for r in runs:
        used = r.labels.get("models_used")
        if not isinstance(used, dict) or not used:
            continue
        paper = r.labels.get("paper_models") if isinstance(r.labels.get("paper_models"), dict) else {}
        swapped = set(r.labels.get("substituted_roles") or [])
        parts = []
        for role, model in used.items():
            named = paper.get(role)
            tail = f" (paper: {named})" if named is not None and role in swapped else \
                (" (the paper's)" if named is not None and model != "oracle" and not str(model).startswith("none (")
                 else "")  # no extraction (a passage-only method) is not the paper's model
            parts.append(f"{role} `{model}`{tail}")
        models.setdefault("; ".join(parts), []).append(r.method)
    if models:
        lines += ["Models (the id each role used):", ""]
        lines += [f"- {text} — {', '.join(dict.fromkeys(methods))}" for text, methods in models.items()] + [""]
    return lines
