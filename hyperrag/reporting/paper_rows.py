"""A paper's published numbers beside ours: one markdown table per published table of an experiment.

For each row the paper prints (``paper (published): <label>``) come our runs of the same method (with their 95%
intervals over the queries) and the difference ``Δ ours − paper`` — only where the two are comparable: a run whose
LLM decisions came from the oracle (an upper bound), that ran the LLM-free fallback, whose models differ from the
paper's (substituted models), whose query or corpus size differs from the paper's (or the paper states none, or the run
records no data label), or that reads a stand-in metric for the paper's gets ``not comparable`` with the reason
instead of a Δ. A paper row names a variant (an ablation, an
embedder) when the paper prints several rows of one method: our run is set against the row whose variant is one of
the run's own varying settings, else against the method's row without a variant, else against its last row (the
paper's own configuration), and the Δ line names the row it was taken against. Values are in percent (a table
printed in fractions is scaled), seconds and hops as printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hyperrag.reporting.collect import RunRecord, stand_in_name, uses_oracle
from hyperrag.reporting.published import KNOWN_METRICS, PublishedRow, PublishedTable, tables_for_experiment
from hyperrag.reporting.tables import markdown_table

PAPER_LABEL = "paper (published)"
ORACLE = "upper bound (oracle)"
#: how a metric a published table reports is computed when the runs lack it
UNMEASURED_HOW = {
    "judge_acc": "GPT-Acc needs a real judge model: python evaluate.py predictions=<runs> metrics=[judge_acc] llm=<model>"
                 " (with llm=oracle it is not measured)",
    "context_recall_claims": "python evaluate.py predictions=<runs> metrics=[context_recall_claims] llm=<judge>",
    "answer_relevancy": "python evaluate.py predictions=<runs> metrics=[answer_relevancy] llm=<judge>",
    "groundedness": "python evaluate.py predictions=<runs> metrics=[groundedness] llm=<judge>",
    "hallucination_rate": "python evaluate.py predictions=<runs> metrics=[groundedness] llm=<judge> (HR: the LLM "
                          "verifier's flags)",
    "groundedness_emb": "python evaluate.py predictions=<runs> metrics=[groundedness_emb]",
    "groundedness_span": "python evaluate.py predictions=<runs> metrics=[groundedness_span]",
    "precision": "python evaluate.py predictions=<runs> metrics=[answer_overlap]",
    "recall": "python evaluate.py predictions=<runs> metrics=[answer_overlap]",
    "ccd": "python evaluate.py predictions=<runs> metrics=[ccd]",
    "srs": "python evaluate.py predictions=<runs> metrics=[srs]",
    "crc": "python evaluate.py predictions=<runs> metrics=[crc]",
    "context_relevance": "python evaluate.py predictions=<runs> metrics=[context_relevance]",
    "api_cost_usd_per_1000_queries": "report.py token_prices=... (the runs record no token counts)",
}


#: (paper's metric, dataset) → (our metric that stands in for it, why): the paper reports a metric our runs cannot
#: compute as such on that dataset
STAND_IN_METRICS = {
    ("accuracy", "adversarialqa"): ("em", ("AdversarialQA is extractive (no options to pick): its accuracy is read "
                                          "as EM of the short answer, the strict reading (Match-Acc, gold contained "
                                          "in the response, is the lenient one and is in the results table)")),
    **{("context_recall_claims", f"holisqa_{domain}"): (
        "context_recall", ("HolisQA's CR without a judge (context_recall): the share of the question's gold sentences "
                           "held by the reader's top 3 passages or the method's recorded evidence; the paper's CR "
                           "is Ragas's judge-attributed recall of the reference answer's statements (another "
                           "measure: no Δ)"))
       for domain in ("medicine", "computer_science", "business", "biology", "psychology")},
}
#: stand-ins that measure something else than the paper's metric: their Δ is "not comparable"
OTHER_MEASURE = frozenset(k for k in STAND_IN_METRICS if k[0] == "context_recall_claims")


#: our run's method name → the method a paper's row names, where the two differ. ``method=lightrag`` runs LightRAG's
#: hybrid mode and its runs are named ``lightrag-hybrid`` (the retriever's name keys its resumable predictions); the
#: papers' "LightRAG" rows state no mode (HugRAG) or are LightRAG's hybrid retrieval (HyperRAG's Table 1 preset), so
#: the hybrid run meets them. The other modes (``lightrag-local``, ``-global``, ``-naive``, ``-mix``) are other
#: variants and meet no published row.
PAPER_METHOD = {"lightrag-hybrid": "lightrag"}


def paper_method(run: RunRecord) -> str:
    """The published rows' method name for ``run`` (:data:`PAPER_METHOD`; else the run's own)."""
    return PAPER_METHOD.get(run.method, run.method)


def ours_metric(run: RunRecord | None, metric: str, dataset: str) -> str:
    """The metric of ``run`` set against the paper's ``metric`` on ``dataset``: itself, or its stand-in."""
    if run is not None and metric not in run.metrics and (metric, dataset) in STAND_IN_METRICS:
        return STAND_IN_METRICS[(metric, dataset)][0]
    return metric


def _setting_matches(run: RunRecord, variant: str) -> bool:
    """A paper row's ``key=value`` variant (``multi_step=false``) against the run's composed config."""
    key, sep, value = variant.partition("=")
    if not sep:
        return False
    key, value = key.strip(), value.strip().lower()
    return any((k == key or k.endswith("." + key)) and str(v).lower() == value for k, v in run.config.items())


def _paper_row_for(run: RunRecord, rows: Sequence[PublishedRow]) -> PublishedRow:
    variants = set(run.variant.values()) | set(run.overrides.values())
    for row in rows:
        if row.variant is not None and (row.variant in variants or _setting_matches(run, row.variant)):
            return row
    plain = [row for row in rows if row.variant is None]
    return plain[0] if plain else rows[-1]


def _digits(metric: str) -> int:
    """Percentages with one decimal; seconds, hops, dollars and counts with two."""
    return 1 if KNOWN_METRICS.get(metric, ("", True))[1] else 2


def _cell(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def run_data(run: RunRecord) -> dict[str, Any]:
    """What the run scored (``metrics.json``'s ``data``: name, queries, passages, digests); ``{}`` if not recorded."""
    data = run.labels.get("data")
    return data if isinstance(data, dict) else {}


SIZE_KEYS = ("queries", "passages", "corpus_chars")
_SIZE_NAMES = {"queries": "query count", "passages": "passage count", "corpus_chars": "corpus size in characters"}


def _size_text(value: int | None) -> str:
    """A size as a table shows it: ``1,890``; ``?`` where not recorded or not stated."""
    return "?" if value is None else f"{int(value):,}"


def run_sizes(run: RunRecord) -> dict[str, int | None]:
    """The run's query and passage counts and corpus characters (``metrics.json``'s ``data``); ``None`` where not
    recorded."""
    data = run_data(run)
    return {"queries": data.get("queries", run.metrics.get("queries")), "passages": data.get("passages"),
            "corpus_chars": data.get("corpus_chars")}


def data_text(run: RunRecord, table: PublishedTable | None = None) -> str:
    """``musique_dev (51 q / 1,890 p; paper 1,000 / 11,656)``: the data the run scored, by its stand-in name when
    known, with the paper's sizes when the table gives them (``?`` where the paper does not state one)."""
    sizes = run_sizes(run)
    name = stand_in_name(run_data(run)) or run.dataset
    ours = f"{_size_text(sizes['queries'])} q"
    ours += f" / {_size_text(sizes['passages'])} p" if sizes["passages"] is not None else ""
    paper = (table.sizes.get(run.dataset) if table is not None else None) or {}
    if paper:
        ours += "; paper " + " / ".join(_size_text(paper[k]) + (" chars" if k == "corpus_chars" else "")
                                        for k in SIZE_KEYS if k in paper)
    return f"{name} ({ours})"


#: the tag a run without any LLM carries (collect.run_tags, from ``llm_label``)
LLM_FREE = "LLM-free"


def not_comparable(run: RunRecord, table: PublishedTable, metric: str | None = None,
                   stand_in: str | None = None) -> str | None:
    """Why the run's figure cannot be set against the paper's (``None``: it can).

    Not comparable: not the paper's method; gold in any step (oracle); another model in a role the paper names;
    the LLM-free fallback (the paper's LLM steps not run); no record of the data the run scored; a size other
    than the paper's, or one the paper does not state (the table gives none, or ``null``); and a stand-in metric
    (``stand_in``, our metric read for the paper's ``metric``, e.g. EM for AdversarialQA's accuracy)."""
    reasons = []
    if stand_in is not None and metric is not None and stand_in != metric:
        reasons.append(f"{stand_in} is another measure than the paper's {metric}"
                       if (metric, run.dataset) in OTHER_MEASURE else f"{stand_in} stands in for the paper's {metric}")
    if run.config.get("method.paper_form") is False:
        reasons.append("not the paper's method")
    if uses_oracle(run) or any(t == f"reader: {ORACLE}" for t in run.tags):
        reasons.append("oracle upper bound")
    if "substituted models" in run.tags:
        reasons.append("substituted models")
    if any(t == LLM_FREE or t.startswith(LLM_FREE + " ") or t == f"reader: {LLM_FREE}" for t in run.tags):
        reasons.append("LLM-free fallback, not the paper's LLM steps")
    paper = table.sizes.get(run.dataset)
    if paper is None:
        reasons.append(f"the paper's size for {run.dataset} is not typed")
    else:
        ours = run_sizes(run)
        sized = []
        for k in SIZE_KEYS:
            if k not in paper:
                continue
            if paper[k] is None:
                sized.append(f"the paper states no {_SIZE_NAMES[k]}")
            elif ours[k] is None:
                if run_data(run):  # without a data label, that one reason says it
                    sized.append(f"our {_SIZE_NAMES[k]} not recorded (paper {paper[k]:,})")
            elif int(ours[k]) != paper[k]:
                sized.append(f"{int(ours[k]):,} vs {paper[k]:,} {k.replace('_', ' ')}")
        if sized:
            reasons.append("size " + ", ".join(sized))
    if not run_data(run):
        reasons.append("the run records no data label (no size or digest to check against the paper's)")
    return "; ".join(reasons) or None


def comparison_for(table: PublishedTable, runs: Sequence[RunRecord]) -> str:
    """The markdown table of one published table: its rows, our matching runs under them, and Δ lines."""
    columns = [(d, m) for d in table.datasets for m in dict.fromkeys(table.metrics.values())
               if any(m in (row.values.get(d) or {}) for row in table.rows)]
    ours_by_method: dict[str, list[RunRecord]] = {}
    for r in runs:
        if r.dataset in table.datasets:
            ours_by_method.setdefault(paper_method(r), []).append(r)
    shown_methods: set[str] = set()
    lines: list[list[str]] = []
    for row in table.rows:
        lines.append([f"{PAPER_LABEL}: {row.label}" + (" (uncertain)" if row.uncertain else "")]
                     + [_cell(table.as_percent(m, (row.values.get(d) or {}).get(m)), _digits(m)) for d, m in columns])
        method_rows = table.rows_for_method(row.method) if row.method else []
        if not row.method or row.method in shown_methods or row is not method_rows[-1]:
            continue  # our runs of a method come once, after the paper's last row of that method
        shown_methods.add(row.method)
        by_label: dict[str, dict[str, RunRecord]] = {}
        for run in ours_by_method.get(row.method, []):
            by_label.setdefault(run.label, {})[run.dataset] = run
        for label, per_dataset in by_label.items():
            ref = _paper_row_for(next(iter(per_dataset.values())), method_rows)
            ours, delta = [f"ours: {label}"], [f"Δ ours − paper ({ref.label})"]
            for d, m in columns:
                run = per_dataset.get(d)
                mine = ours_metric(run, m, d)
                value = run.metrics.get(mine) if run is not None else None
                ci = run.interval(mine) if run is not None and value is not None else None
                k = _digits(m)
                tag = f" ({mine})" if mine != m and value is not None else ""
                ours.append("–" if value is None else (f"{value:.{k}f} [{ci.low:.{k}f}, {ci.high:.{k}f}]{tag}"
                                                       if ci is not None and ci.n > 1 else f"{value:.{k}f}{tag}"))
                paper = table.as_percent(m, (ref.values.get(d) or {}).get(m))
                why = not_comparable(run, table, m, mine) if run is not None else None
                if value is None or paper is None:
                    delta.append("–")
                else:
                    delta.append(f"not comparable ({why})" if why else f"{value - paper:+.{k}f}")
            lines += [ours, delta]
    header = ["row"] + [f"{d} {m}" if len(table.datasets) > 1 else m for d, m in columns]
    return markdown_table(header, lines)


def paper_sections(experiment: str, runs: Sequence[RunRecord]) -> list[str]:
    """Markdown sections: each published table the experiment reproduces, with our rows and the differences."""
    sections: list[str] = []
    for table in tables_for_experiment(experiment):
        head = f"## Paper vs ours: {table.table} ({table.where})"
        if table.values_from_plot or not table.rows:
            sections += [head, "", (f"{table.caption}. The paper gives these values only in a plot: no "
                         "published numbers to set ours against."), ""]
            continue
        ours = sorted({t for r in runs if r.dataset in table.datasets for t in r.tags})
        sized = ", ".join(dict.fromkeys(data_text(r, table) for r in runs if r.dataset in table.datasets))
        sections += [head, "", f"{table.caption}.", "",
                     f"Paper's setting: {table.setting}.", "",
                     (f"Ours: {', '.join(ours) if ours else 'see the row labels'}; {sized or 'no run of its datasets'};"
                     " the 95% interval over our queries in brackets; – where we have no figure. No Δ is printed "
                     "for a run that is an oracle upper bound, LLM-free, uses other models than the paper's, scored "
                     "another number of queries or passages (or a size the paper does not state, or records no data "
                     "label), or reads another metric for the paper's (\"not comparable\", with the reason): a "
                     "difference from the paper on other queries, another corpus, other models or another metric is "
                     "not a replication result."), "",
                     comparison_for(table, runs), ""]
        ran = [r for r in runs if r.dataset in table.datasets]
        unmeasured = [m for m in dict.fromkeys(table.metrics.values())
                      if ran and not any(ours_metric(r, m, r.dataset) in r.metrics for r in ran)]
        stand_ins = {why for r in ran for m in table.metrics.values()
                     if ours_metric(r, m, r.dataset) != m and (why := STAND_IN_METRICS[(m, r.dataset)][1])}
        if stand_ins:
            sections += [f"Stand-in metric: {'; '.join(sorted(stand_ins))}.", ""]
        if unmeasured:
            sections += [f"Not measured in these runs: {', '.join(unmeasured)} — "
                         + "; ".join(UNMEASURED_HOW.get(m, "no run of this collection computes it") for m in unmeasured)
                         + ".", ""]
        if table.sizes_note:
            sections += [f"Sizes: {table.sizes_note}.", ""]
        if table.note:
            sections += [f"Note: {table.note}", ""]
    return sections
