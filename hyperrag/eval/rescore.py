"""Re-scoring finished runs: the evaluation suite over existing ``predictions.jsonl`` files, no retrieval.

Used by ``evaluate.py``. Per predictions file it writes ``evaluation.json`` (aggregate metrics, settings,
skipped metrics and why) and ``evaluation.jsonl`` (per-query values: claims, verdicts, generated questions)
next to the file, or in ``out/`` (``out/<run path>/`` for several files).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.eval.cost import CostMark, judge_cost
from hyperrag.eval.qa import f1_answer_of
from hyperrag.eval.runs import (
    find_prediction_files,
    join_gold_fields,
    load_dataset,
    queries_file_of,
    read_json_file,
    read_predictions,
    read_query_records,
    run_config,
)
from hyperrag.eval.suite import CAUSAL_FIELDS, GOLD_SENTENCE_FIELDS, EvalInputs, evaluate_rows

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel

log = logging.getLogger(__name__)


def _select(node: Any, key: str, default: Any = None) -> Any:
    if node is None:
        return default
    value = node.get(key) if hasattr(node, "get") else None
    return default if value is None else value


def _out_dir(pred: Path, files: list[Path], out: str | None) -> Path:
    if not out:
        return pred.parent
    if len(files) == 1:
        return Path(out)
    root = Path(os.path.commonpath([f.parent.resolve() for f in files]))
    return Path(out) / pred.parent.resolve().relative_to(root)


CausalReference = Callable[..., list[tuple[set[str], set[tuple[str, str]]] | None]]
_WARNED: set[str] = set()  # datasets whose missing reference graph was already reported


def crc_reference_graph(cfg: Any, saved: dict[str, Any], run_cfg: Any) -> Path | None:
    """The causal graph CRC's reference pairs come from (``cfg.causal_index``):

    * ``reference`` (the default; also null) — the dataset's **fixed reference graph**,
      ``<cache_dir>/crc_reference/<dataset>/`` (``python -m hyperrag.causal reference data=<dataset>`` builds it
      once from the gold supporting passages with the preset's classifier and verifier), the same file for every
      method; None (passages only, with a warning) when it has not been built;
    * ``run`` — the CDF-RAG run's own causal index (its own extraction: not like for like across methods);
    * a causal index directory.

    Raises:
        InputError: a directory given (or recorded) without ``causal_graph.json``.
    """
    from hyperrag.errors import InputError
    from hyperrag.eval.causal import reference_graph_dir

    spec = cfg.get("causal_index")
    if spec in (None, "", "reference"):
        name = saved.get("dataset") or _select(cfg.get("data"), "name") or _select(_select(run_cfg, "data"), "name")
        cache = cfg.get("cache_dir") or os.environ.get("HYPERRAG_CACHE") or Path.home() / ".cache" / "hyperrag"
        directory = reference_graph_dir(cache, str(name)) if name else None
        if directory is None or not (directory / "causal_graph.json").is_file():
            if name not in _WARNED:
                _WARNED.add(name)
                log.warning("no CRC reference graph for dataset %s (build it: python -m hyperrag.causal reference "
                            "data=<dataset>): CRC's reference is the gold passages only, no reference pairs", name)
            return None
        return directory
    directory = saved.get("causal_index_dir") if spec == "run" else spec
    if not directory:
        return None
    if not (Path(directory) / "causal_graph.json").is_file():
        raise InputError("not a causal index directory (no causal_graph.json)", path=directory, setting="causal_index")
    return Path(directory)


def crc_reference_label(cfg: Any, saved: dict[str, Any], run_cfg: Any) -> dict[str, Any] | None:
    """What CRC's reference pairs came from, for ``evaluation.json``: the graph's directory and, for a fixed
    reference graph, its label (``crc_reference.json``: classifier, verifier, gold passage count; not their ids);
    None: none."""
    from hyperrag.eval.causal import REFERENCE_LABEL_FILE

    directory = crc_reference_graph(cfg, saved, run_cfg)
    if directory is None:
        return None
    label = directory / REFERENCE_LABEL_FILE
    built = json.loads(label.read_text()) if label.is_file() else {}
    return {"directory": str(directory), **{k: v for k, v in built.items() if k != "gold_ids"}}


def causal_reference(cfg: Any, saved: dict[str, Any], run_cfg: Any, rows: list[dict[str, Any]], encoder: Encoder,
                     reference: CausalReference | None
                     ) -> list[tuple[set[str], set[tuple[str, str]]] | None] | None:
    """CRC's reference per row (``cfg.crc_reference``), over the graph :func:`crc_reference_graph` names:

    * ``gold`` (the default) — not from the run: the row's gold supporting passages, and the causal pairs the graph
      (by default the dataset's fixed reference graph) extracted *from those passages*; defined for every run with
      gold passages — every ablation stage, every method — and None for a row without them;
    * ``graph`` — the causal paths the graph holds from each question (``reference`` traverses it with the run's
      traversal settings, or ``method/cdfrag.yaml``'s).

    ``reference`` reads the graph (``evaluate.py`` passes
    :func:`hyperrag.causal.reference.causal_reference_from_index`); None when there is no reference at all."""
    mode = str(cfg.get("crc_reference") or "gold")
    if mode not in ("gold", "graph"):
        from hyperrag.errors import InputError

        raise InputError(f"must be gold or graph, got {mode!r}", setting="crc_reference")
    directory = crc_reference_graph(cfg, saved, run_cfg)
    if mode == "gold":
        golds = [[str(g) for g in r.get("gold_ids") or []] for r in rows]
        if not any(golds):
            return None
        if directory and reference is not None:
            return reference(str(directory), None, encoder, [r["question"] for r in rows], gold_ids=golds)
        return [(set(g), set()) if g else None for g in golds]
    if not directory or encoder is None:
        return None
    if reference is None:
        log.warning("no causal reference reader given: CRC is skipped")
        return None
    from omegaconf import OmegaConf

    method = _select(run_cfg, "method")
    node = _select(_select(method, "retriever"), "traversal") if _select(method, "name") == "cdfrag" else None
    traversal = OmegaConf.to_container(node, resolve=True) if node is not None else None
    return reference(str(directory), traversal, encoder, [r["question"] for r in rows])


def evaluate_file(pred: Path, cfg: Any, llm: LanguageModel, encoder: Encoder, datasets: dict[str, Any],
                  out_dir: Path, reference: CausalReference | None = None) -> dict[str, Any]:
    """Score one predictions file with the suite (``reference``: see :func:`causal_reference`); write and return
    its ``evaluation.json`` record."""
    from omegaconf import OmegaConf

    rows = read_predictions(pred)
    run_cfg = run_config(pred.parent)
    data_cfg = cfg.get("data") or _select(run_cfg, "data")
    dataset = None
    if data_cfg is not None:
        key = json.dumps(OmegaConf.to_container(data_cfg, resolve=True), sort_keys=True)
        if key not in datasets:
            try:
                datasets[key] = load_dataset(data_cfg)
            except Exception as err:  # noqa: BLE001 - text metrics are skipped, the rest still runs
                log.warning("%s: dataset not loadable (%s); text-based metrics are skipped", pred, err)
                datasets[key] = None
        dataset = datasets[key]
    queries = cfg.get("queries") or queries_file_of(data_cfg)
    if queries:
        joined = join_gold_fields(rows, read_query_records(queries), GOLD_SENTENCE_FIELDS + CAUSAL_FIELDS)
        if joined:
            log.info("%s: gold sentences / causal pairs joined from %s for %d queries", pred, queries, joined)
    saved = {}
    if (pred.parent / "metrics.json").is_file():
        saved = read_json_file(pred.parent / "metrics.json")
        saved = saved if isinstance(saved, dict) else {}
    context_top_n = int(cfg.context_top_n or _select(run_cfg, "answer_top_n", 0) or 5)
    dataset_name = str((data_cfg or {}).get("name") or saved.get("dataset") or "")
    f1_answer = (saved.get("metrics") or {}).get("f1_answer") or f1_answer_of(dataset_name)
    inputs = EvalInputs(rows=rows, corpus=None if dataset is None else dataset.corpus, llm=llm, encoder=encoder,
                        ks=tuple(cfg.ks or _select(run_cfg, "ks", [2, 5, 10])),
                        context_top_n=context_top_n,
                        answer_top_n=int(_select(run_cfg, "answer_top_n", 0) or context_top_n),
                        f1_answer=str(f1_answer),
                        context_max_items=cfg.get("context_max_items"),
                        context_max_tokens=cfg.get("context_max_tokens"),
                        lexical_threshold=float(cfg.lexical_threshold),
                        relevancy_questions=int(cfg.relevancy_questions), progress=bool(cfg.progress),
                        hr_delta=float(cfg.get("hr_delta") or 0.0), span_threshold=float(cfg.get("span_threshold", 0.8)),
                        causal_reference=causal_reference(cfg, saved, run_cfg, rows, encoder, reference),
                        crc_reference=str(cfg.get("crc_reference") or "gold"),
                        crc_budget=int(cfg.crc_budget))
    metrics = cfg.metrics if isinstance(cfg.metrics, str) else list(cfg.metrics)
    before = CostMark.now(llm)
    aggregate, per_query, skipped = evaluate_rows(inputs, metrics)
    if inputs.llm_available:  # what the judges cost (cost.evaluate.*, backend "judge"), beside the run's own cost
        aggregate.update(judge_cost(before, CostMark.now(llm), len(rows)))
    record = {"predictions": str(pred), "dataset": saved.get("dataset") or _select(data_cfg, "name"),
              "method": saved.get("method") or _select(_select(run_cfg, "method"), "name"),
              "queries": len(rows), "context_top_n": inputs.context_top_n,
              "context_max_items": inputs.context_max_items, "context_max_tokens": inputs.context_max_tokens, "ks": list(inputs.ks),
              "crc_budget": inputs.crc_budget, "crc_reference_graph": crc_reference_label(cfg, saved, run_cfg),
              "llm": getattr(llm, "model", None) if inputs.llm_available else None,
              "metrics": aggregate, "skipped": skipped}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "evaluation.json").write_text(json.dumps(record, indent=1, default=str))
    with (out_dir / "evaluation.jsonl").open("w") as handle:
        for row in per_query:
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    return record


def evaluate_predictions(cfg: Any, reference: CausalReference | None = None) -> list[dict[str, Any]]:
    """Evaluate every predictions file ``cfg.predictions`` names (file, run dir, glob or list); ``reference``
    reads a causal index for CRC (see :func:`causal_reference`)."""
    from hydra.utils import instantiate

    from hyperrag.llm import build_llm

    files = find_prediction_files(cfg.predictions)
    encoder = instantiate(cfg.embedder, show_progress=False) if cfg.get("embedder") else None
    datasets: dict[str, Any] = {}
    with build_llm(cfg.get("llm")) as llm:
        return [evaluate_file(f, cfg, llm, encoder, datasets, _out_dir(f, files, cfg.get("out")), reference)
                for f in files]


def print_evaluation_table(records: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    keys: list[str] = []
    for r in records:
        keys += [k for k in r["metrics"] if k not in keys and not k.startswith("cost.")]  # cost: evaluation.json
    table = Table(title=f"evaluation of {len(records)} run(s)")
    table.add_column("run")
    for k in keys:
        table.add_column(k, justify="right")
    for r in records:
        name = f"{r['method']} / {r['dataset']}  {Path(r['predictions']).parent}"
        table.add_row(name, *[f"{r['metrics'][k]:.1f}" if k in r["metrics"] else "–" for k in keys])
    Console(width=max(120, 24 * len(keys))).print(table)
    for r in records:
        if r["skipped"]:
            Console().print(f"[dim]{Path(r['predictions']).parent}: skipped {r['skipped']}[/dim]")
