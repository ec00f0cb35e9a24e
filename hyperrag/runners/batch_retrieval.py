"""Batch retrieval over a query file with Lightning's predict loop (sharded when devices > 1).

Crash-safe and resumable: every batch is retrieved, answered (the retriever's own ``details["answer"]``,
else the QA reader when an LLM is available) and appended to ``predictions.jsonl`` with flush + fsync
(one shard per process when devices > 1). A rerun into the same ``out`` skips the query ids already
there (a torn last line from a kill is dropped) and finishes only the rest; then the rows are
rewritten in query order and ``metrics.json`` is computed over all of them, both atomically.
``predictions.meta.json`` keys the rows to (dataset, corpus, retriever, top_k, answering, and the index
version when retrieving over an index directory): a run with other settings, or over an index updated
since, starts afresh; so does ``resume=False``.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import lightning as L
import torch
from lightning.pytorch.callbacks import BasePredictionWriter

from hyperrag.data.types import Corpus, Dataset, Query
from hyperrag.eval.qa import option_accuracy, qa_metrics
from hyperrag.eval.retrieval import full_chain_at_k, retrieval_metrics
from hyperrag.generation.reader import answer_rows
from hyperrag.retrievers.base import Retriever
from hyperrag.utils.atomic import append_durably, atomic_write_json, atomic_write_jsonl, read_jsonl_log
from hyperrag.utils.hashing import Hasher, stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)
PREDICTIONS = "predictions.jsonl"
META = "predictions.meta.json"


class _QueryList(torch.utils.data.Dataset):
    def __init__(self, queries: list[Query]) -> None:
        self.queries = queries

    def __len__(self) -> int:
        return len(self.queries)

    def __getitem__(self, i: int) -> Query:
        return self.queries[i]


class RetrievalModule(L.LightningModule):
    """Wraps a retriever so Lightning can shard query batches over devices/processes; answers per batch."""

    def __init__(self, retriever: Retriever, dataset: Dataset, top_k: int, llm: LanguageModel | None = None,
                 answer_top_n: int = 0) -> None:
        super().__init__()
        self.retriever = retriever
        self.corpus: Corpus = dataset.corpus
        self.passage_ids = dataset.corpus.ids
        self.top_k = top_k
        self.llm = llm
        self.answer_top_n = answer_top_n
        self.answer_seconds = 0.0

    def transfer_batch_to_device(self, batch: list[Query], device: torch.device, dataloader_idx: int) -> list[Query]:
        return batch  # plain query records; the retriever places its own tensors

    def predict_step(self, batch: list[Query], batch_idx: int) -> list[dict[str, Any]]:
        out = self.retriever.retrieve([q.question for q in batch], self.top_k)
        rows = []
        for i, q in enumerate(batch):
            row = {"id": q.id, "question": q.question,
                   # index -1: no passage (a method that retrieved nothing for this query, e.g. a failed filter)
                   "ranked_ids": [self.passage_ids[j] for j in out.indices[i].tolist() if j >= 0],
                   "scores": [round(float(s), 6) for j, s in zip(out.indices[i].tolist(), out.scores[i].tolist())
                              if j >= 0],
                   "gold_ids": list(q.gold_ids), "answers": list(q.answers)}
            if out.details:
                row["details"] = out.details[i]
            if q.options:  # multiple choice: the reader picks one, `accuracy` scores it
                row.update(options=list(q.options), answer_index=q.answer_index)
            rows.append(row)
        t0 = time.perf_counter()
        answer_rows(self.llm, rows, self.corpus, top_n=self.answer_top_n)
        self.answer_seconds += time.perf_counter() - t0
        return rows


class _AppendWriter(BasePredictionWriter):
    """Appends each batch's rows durably: to ``predictions.jsonl``, or one shard per process."""

    def __init__(self, out_dir: Path) -> None:
        super().__init__(write_interval="batch")
        self.out_dir = out_dir

    def target(self, trainer: L.Trainer) -> Path:
        if trainer.world_size == 1:
            return self.out_dir / PREDICTIONS
        return self.out_dir / f"predictions.rank{trainer.global_rank}.jsonl"

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        with self.target(trainer).open("a", encoding="utf-8") as handle:
            append_durably(handle, [json.dumps(row, ensure_ascii=False) for row in prediction])


def _log_files(out: Path) -> list[Path]:
    return [out / PREDICTIONS, *sorted(out.glob("predictions.rank*.jsonl"))]


def resume_key(dataset: Dataset, retriever: Retriever, top_k: int, answering: bool) -> str:
    corpus = Hasher()
    for pid in dataset.corpus.ids:
        corpus.update(pid).update(b"\0")
    spec = {"dataset": dataset.name, "corpus": corpus.hexdigest(), "retriever": type(retriever).__qualname__,
            "name": getattr(retriever, "name", ""), "top_k": top_k, "answering": answering}
    index_key = getattr(retriever, "index_key", None)
    if index_key:  # retrieving over an index directory: an insert/delete since invalidates the rows
        spec["index"] = index_key
    return stable_digest(spec)


def finished_rows(out: Path, key: str, query_ids: set[str], resume: bool = True) -> dict[str, dict[str, Any]]:
    """Rows already written by an earlier (possibly killed) run with the same key; otherwise start afresh."""
    meta = out / META
    same = False
    if resume and meta.is_file():
        try:
            same = json.loads(meta.read_text(encoding="utf-8")).get("key") == key
        except ValueError:
            same = False
    if not same:
        for path in _log_files(out):
            path.unlink(missing_ok=True)
        atomic_write_json(meta, {"key": key})
        return {}
    rows: dict[str, dict[str, Any]] = {}
    for path in _log_files(out):
        for row in read_jsonl_log(path):
            rid = row.get("id")
            if isinstance(rid, str) and rid in query_ids and rid not in rows:
                rows[rid] = row
    return rows


def run_batch_retrieval(dataset: Dataset, retriever: Retriever, out_dir: str | Path, *, top_k: int = 10,
                        batch_size: int = 64, ks: tuple[int, ...] = (2, 5, 10), accelerator: str = "auto",
                        devices: int | str = 1, index_seconds: float | None = None,
                        llm: LanguageModel | None = None, answer_top_n: int = 5, resume: bool = True,
                        reader_llm: LanguageModel | None = None) -> dict[str, Any]:
    """Retrieve every query of ``dataset``, answer it (the retriever's own answer, else the reader on the top
    ``answer_top_n`` passages when an LLM is available; ``answer_top_n=0`` skips the reader), and score both.

    Args:
        llm: the retrieval LLM (the retriever's); its label marks the figures (LLM-free, oracle, model).
        reader_llm: the QA reader (default: ``llm``) — another model or endpoint than the one that scores edges
            or filters facts, as CatRAG and HippoRAG 2 run it.

    Returns the metrics dict (empty on ranks other than 0).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    reader = reader_llm if reader_llm is not None else llm
    answering = bool(answer_top_n and getattr(reader, "available", False))
    key = resume_key(dataset, retriever, max(top_k, max(ks)), answering)
    done = finished_rows(out, key, {q.id for q in dataset.queries}, resume)
    todo = [q for q in dataset.queries if q.id not in done]
    if done:
        log.info("batch retrieval: %d/%d queries already in %s; %d to go", len(done), len(dataset.queries),
                 out / PREDICTIONS, len(todo))
    module = RetrievalModule(retriever, dataset, max(top_k, max(ks)), reader, answer_top_n if answering else 0)
    accounting = getattr(llm, "accounting", None)
    calls_before = accounting.total().calls if accounting is not None else 0
    reader_accounting = getattr(reader, "accounting", None) if reader is not llm else None
    reader_calls_before = reader_accounting.total().calls if reader_accounting is not None else 0
    t0 = time.perf_counter()
    rank = 0
    if todo:
        trainer = L.Trainer(accelerator=accelerator, devices=devices, logger=False, enable_checkpointing=False,
                            enable_model_summary=False, callbacks=[_AppendWriter(out)],
                            enable_progress_bar=len(todo) > batch_size)
        loader = torch.utils.data.DataLoader(_QueryList(todo), batch_size=batch_size, shuffle=False, collate_fn=list)
        trainer.predict(module, loader, return_predictions=False)
        trainer.strategy.barrier()
        rank = trainer.global_rank
    seconds = time.perf_counter() - t0
    if rank != 0:
        return {}
    rows_by_id = finished_rows(out, key, {q.id for q in dataset.queries}) if todo else done
    rows = [rows_by_id[q.id] for q in dataset.queries if q.id in rows_by_id]
    missing = len(dataset.queries) - len(rows)
    if missing:
        raise RuntimeError(f"{missing} queries have no prediction row in {out}")
    metrics = score_rows(rows, ks, answer_top_n)
    metrics.update({"resumed_queries": len(done), "retrieve_seconds": round(seconds, 3),
                    "queries_per_second": round(len(todo) / max(seconds, 1e-9), 2)})
    if "answer_failures" in metrics:
        metrics["answer_seconds"] = round(module.answer_seconds, 3)
    if accounting is not None and accounting.tasks:
        # query-time LLM calls (fact filter, edge scoring, summaries, answers), cache hits included
        metrics["llm_calls_per_query"] = round((accounting.total().calls - calls_before) / max(len(todo), 1), 2)
    if reader_accounting is not None and reader_accounting.tasks:
        metrics["reader_calls_per_query"] = round(
            (reader_accounting.total().calls - reader_calls_before) / max(len(todo), 1), 2)
    skipped = llm_steps_skipped(retriever, rows, answer_top_n, answering)
    metrics["llm_steps_skipped"] = skipped
    if skipped:
        log.warning("%s: configured LLM steps that did not run (no LLM, failed call or budget cap): %s",
                    getattr(retriever, "name", "retriever"), ", ".join(f"{k} {v}" for k, v in skipped.items()))
    metrics.update(run_labels(llm, reader, retriever))
    atomic_write_jsonl(out / PREDICTIONS, rows)
    for shard in out.glob("predictions.rank*.jsonl"):
        shard.unlink()
    if index_seconds is not None:
        metrics["index_seconds"] = round(index_seconds, 3)
    record = {"dataset": dataset.name, **retriever.describe(), "metrics": metrics}
    if accounting is not None and accounting.tasks:
        record["llm_usage"] = accounting.to_dict()
    if reader_accounting is not None and reader_accounting.tasks:
        record["reader_llm_usage"] = reader_accounting.to_dict()
    atomic_write_json(out / "metrics.json", record)
    return metrics


def score_rows(rows: list[dict[str, Any]], ks: tuple[int, ...], answer_top_n: int) -> dict[str, Any]:
    """Retrieval metrics of prediction rows, plus answer metrics (EM/F1/JSR, accuracy for multiple choice,
    failures) when they were answered (JSR's chain is the reader's top ``answer_top_n``)."""
    metrics: dict[str, Any] = retrieval_metrics([r["ranked_ids"] for r in rows], [r["gold_ids"] for r in rows], ks)
    metrics["queries"] = len(rows)
    if any("answer" in r for r in rows):
        n = answer_top_n or 5
        chain = [full_chain_at_k(r["ranked_ids"], r["gold_ids"], n) if r["gold_ids"] else 0.0 for r in rows]
        metrics.update(qa_metrics([r.get("answer", "") for r in rows], [r["answers"] for r in rows], chain,
                                  [r.get("options") or [] for r in rows], [r.get("answer_index") for r in rows]))
        metrics.update(option_accuracy([r.get("answer", "") for r in rows], [r.get("options") or [] for r in rows],
                                       [r.get("answer_index") for r in rows]))
        metrics["answer_failures"] = sum(not r.get("answer_ok", False) for r in rows)
    return metrics


def llm_steps_skipped(retriever: Retriever, rows: list[dict[str, Any]], answer_top_n: int,
                      answering: bool) -> dict[str, int]:
    """Configured LLM steps that did not run, by step: the retriever's own count, plus the reader's answers
    (no reader LLM, or a failed call) when answers were asked for (``answer_top_n > 0``)."""
    skipped = dict(sorted(getattr(retriever, "skipped", {}).items()))
    if answer_top_n:
        missing = sum(1 for r in rows if not r.get("answer_ok", False)) if answering else \
            sum(1 for r in rows if "answer" not in r)
        if missing:
            skipped["answer"] = skipped.get("answer", 0) + missing
    return skipped


def run_labels(llm: LanguageModel | None, reader: LanguageModel | None, retriever: Retriever) -> dict[str, Any]:
    """What the figures are: which LLM made the decisions (``llm_kind``, ``llm_label``: LLM-free / upper bound
    (oracle) / the model), which one read, and whether the method saw its evaluation questions at index time."""
    from hyperrag.llm import llm_label

    kind = getattr(llm, "kind", "none") if getattr(llm, "available", False) else "none"
    out: dict[str, Any] = {"llm_kind": kind, "llm_label": llm_label(llm)}
    if reader is not llm:
        out["reader_llm_kind"] = getattr(reader, "kind", "none") if getattr(reader, "available", False) else "none"
        out["reader_llm_label"] = llm_label(reader)
    if getattr(retriever, "transductive", False):
        out["transductive"] = True
    return out


def run_title(method: str, dataset: str, queries: int, metrics: dict[str, Any]) -> str:
    """The console title of a run's metrics table, labelled (LLM-free, upper bound (oracle), transductive)."""
    labels = [metrics.get("llm_label", "")]
    if metrics.get("reader_llm_label"):
        labels.append(f"reader: {metrics['reader_llm_label']}")
    if metrics.get("transductive"):
        labels.append("transductive")
    return f"{method} on {dataset} ({queries} queries) — {', '.join(x for x in labels if x)}"


def print_metrics_table(title: str, metrics: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    keys = [k for k in metrics if "@" in k or k in ("em", "f1", "jsr", "accuracy")]
    for k in keys:
        table.add_column(k, justify="right")
    table.add_row(*[f"{metrics[k]:.1f}" for k in keys])
    Console().print(table)
    extra = {k: v for k, v in metrics.items() if k not in keys}
    Console().print(extra)
