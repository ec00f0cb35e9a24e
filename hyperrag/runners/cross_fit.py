"""Cross-fitted retrieval (``retrieve.py cv_folds=K``): no query is scored by an artifact that trained on it.

Small query sets (musique_dev has 51 questions) leave no room for a separate training split. With ``cv_folds=K``
the queries are split into K folds; for each fold the method's query-trained artifacts (``method.cross_fit``: the
training task and the retriever setting that names its checkpoint, e.g. CDF-RAG's PPO policy) are trained on the
other K-1 folds with ``train.py``'s machinery, and that fold's queries are retrieved (and answered) with them.
Predictions of all folds are merged in query order and scored together; ``metrics.json`` keeps each fold's
checkpoints and metrics.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf

from hyperrag.data.types import Dataset, Query
from hyperrag.errors import InputError
from hyperrag.eval.qa import f1_answer_of
from hyperrag.utils.atomic import atomic_write_json, atomic_write_jsonl, read_jsonl_log

log = logging.getLogger(__name__)


def folds(queries: list[Query], k: int, seed: int) -> list[list[Query]]:
    """``k`` folds of ``queries`` (a seeded shuffle dealt round-robin), each in query-file order."""
    if not 2 <= k <= len(queries):
        raise InputError(f"must be between 2 and the number of queries ({len(queries)}), got {k}",
                         setting="cv_folds")
    order = torch.randperm(len(queries), generator=torch.Generator().manual_seed(seed)).tolist()
    fold_of = {pos: i % k for i, pos in enumerate(order)}
    return [[q for pos, q in enumerate(queries) if fold_of[pos] == f] for f in range(k)]


def train_artifact(cfg: DictConfig, task: str, train_ids: list[str], out: Path,
                   overrides: list[str] | tuple[str, ...] = ()) -> Path:
    """Train ``task`` (``hydra_configs/task/<task>.yaml``) on exactly ``train_ids`` with the run's data, embedder,
    method settings, seed, folders and — for a task that takes one (``task.llm``) — LLM, plus the spec's own
    ``overrides`` of the training config (e.g. an experiment's optimiser settings); returns the checkpoint (reused
    when one with the same key exists)."""
    from hyperrag.config import compose_config
    from hyperrag.training.fit import fit_task

    train_cfg = compose_config("train", [f"task={task}", "logger=none", *overrides])
    OmegaConf.set_struct(train_cfg, False)
    # paper_data: data=paper's dir interpolates it (a fold of a paper-table run trains on the same files)
    for key in ("data", "embedder", "hardware", "method", "seed", "cache_dir", "paper_data"):
        if key in cfg:
            train_cfg[key] = cfg[key]
    # the artifact goes where the method looks for its trained parts
    train_cfg.models_dir = str(cfg.method.retriever.get("models_dir") or train_cfg.models_dir)
    train_cfg.task.split.train_ids = list(train_ids)
    if "llm" in train_cfg.task and cfg.get("llm") is not None:
        # trained with the run's LLM: the artifact's actions are the ones the retriever deploys
        train_cfg.task.llm = cfg.llm
    train_cfg.out = str(out)
    return fit_task(train_cfg).checkpoint


def run_cross_fitted(cfg: DictConfig, dataset: Dataset, run_fold: Any) -> dict[str, Any]:
    """Cross-fit the method's artifacts over ``cfg.cv_folds`` folds.

    Args:
        cfg: the composed retrieve config (``cv_folds``, ``method.cross_fit``, ``out``, ``seed``...).
        dataset: the full query file.
        run_fold: ``(fold dataset, setting overrides {name: checkpoint}, fold out dir) -> metrics``: builds the
            retriever with those settings, indexes and retrieves the fold into its folder (the usual path).

    Returns:
        metrics over all queries (each scored by an artifact that never saw it), with ``cv_folds`` and per-fold
        records in ``metrics.json``.
    """
    from hyperrag.runners.batch_retrieval import score_rows

    specs = list(cfg.method.get("cross_fit") or [])
    if not specs and cfg.method.get("cv_folds_refused"):  # the method learns from the questions in its own way
        raise InputError(" ".join(str(cfg.method.cv_folds_refused).split()), setting="cv_folds")
    if not specs:  # nothing trained on the questions: every fold would see the same index
        log.info("method %s trains nothing on the questions (no method.cross_fit): cv_folds has no effect",
                 cfg.method.name)
        return run_fold(dataset, {}, Path(cfg.out))
    out = Path(cfg.out)
    k = int(cfg.cv_folds)
    parts = folds(dataset.queries, k, int(cfg.seed))
    rows_by_id: dict[str, dict[str, Any]] = {}
    records, last_metrics = [], {}
    for f, fold_queries in enumerate(parts):
        held = {q.id for q in fold_queries}
        train_ids = [q.id for q in dataset.queries if q.id not in held]
        fold_out = out / f"fold-{f}"
        overrides = {str(s.setting): str(train_artifact(cfg, str(s.task), train_ids, fold_out / "train",
                                                        [str(o) for o in s.get("overrides") or ()]))
                     for s in specs}
        log.info("fold %d/%d: %d queries scored, artifacts trained on the other %d: %s", f + 1, k, len(held),
                 len(train_ids), overrides)
        metrics = run_fold(dataclasses.replace(dataset, queries=fold_queries), overrides, fold_out)
        rows_by_id.update({r["id"]: r for r in read_jsonl_log(fold_out / "predictions.jsonl")})
        records.append({"fold": f, "queries": [q.id for q in fold_queries], "artifacts": overrides,
                        "metrics": metrics})
        last_metrics = metrics
    rows = [rows_by_id[q.id] for q in dataset.queries]
    atomic_write_jsonl(out / "predictions.jsonl", rows)
    metrics = score_rows(rows, tuple(cfg.ks), int(cfg.answer_top_n), f1_answer=f1_answer_of(dataset.name))
    skipped: dict[str, int] = {}
    for rec in records:
        for step, n in rec["metrics"].get("llm_steps_skipped", {}).items():
            skipped[step] = skipped.get(step, 0) + n
    from hyperrag.eval.cost import combine

    metrics.update(combine([rec["metrics"] for rec in records], len(dataset.queries)))  # cost.*: the folds' sums
    metrics.update({"cv_folds": k, "llm_steps_skipped": skipped,
                    **{key: last_metrics[key] for key in ("llm_kind", "llm_label", "reader_llm_kind",
                                                          "reader_llm_label", "transductive", "models", "models_used",
                                                          "paper_models", "substituted_roles", "data")
                       if key in last_metrics}})
    fold_record = json.loads((out / "fold-0" / "metrics.json").read_text())
    record = {key: v for key, v in fold_record.items() if key not in ("metrics", "llm_usage", "reader_llm_usage")}
    atomic_write_json(out / "metrics.json", {**record, "metrics": metrics, "folds": records})
    return metrics
