"""Batch retrieval over a query file with Lightning's predict loop (sharded when devices > 1).

Crash-safe and resumable: every batch is retrieved, answered (the retriever's own ``details["answer"]``,
else the QA reader when an LLM is available) and appended to ``predictions.jsonl`` with flush + fsync
(one shard per process when devices > 1). A rerun into the same ``out`` skips the query ids already
there (a torn last line from a kill is dropped) and finishes only the rest; then the rows are
rewritten in query order and ``metrics.json`` is computed over all of them, both atomically.

With ``devices > 1`` (Lightning DDP: the launching process is rank 0, the others rerun the entry script)
rank 0 alone reads the resume state and decides which queries are left and where the rows go; the other
processes receive both from it once the process group is up, so every process shards the same list
(Lightning's unrepeated distributed sampler: each query exactly once) into the same directory, whatever their
own ``out`` resolved to. After the loop the other ranks send rank 0 their query-time counters (LLM usage,
skipped LLM steps, answer time) and rank 0 alone merges the shards, writes ``predictions.jsonl`` and
``metrics.json``.
``metrics.json`` also records what the run cost (:mod:`hyperrag.eval.cost`): ``cost.index.*`` and ``cost.query.*``
per LLM backend (calls, tokens, seconds; the query phase also per 1,000 queries) and ``index_bytes``.
``predictions.meta.json`` keys the rows to (dataset, corpus, retriever, top_k, answering, and the index
version when retrieving over an index directory): a run with other settings, or over an index updated
since, starts afresh; so does ``resume=False``.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import lightning as L
import torch
from lightning.pytorch.callbacks import BasePredictionWriter

from hyperrag.data.types import Corpus, Dataset, Query
from hyperrag.eval.cost import CostMark, index_bytes, run_cost
from hyperrag.eval.qa import f1_answer_of, option_accuracy, qa_metrics
from hyperrag.eval.retrieval import full_chain_at_k, retrieval_metrics
from hyperrag.generation.reader import answer_rows
from hyperrag.llm.accounting import Accounting, TaskStats, stats_since
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
                 answer_top_n: int = 0, answer_style: str = "short", reader_prompt: str = "grounded") -> None:
        super().__init__()
        self.retriever = retriever
        self.corpus: Corpus = dataset.corpus
        self.passage_ids = dataset.corpus.ids
        self.top_k = top_k
        self.llm = llm
        self.answer_top_n = answer_top_n
        self.answer_style = answer_style
        self.reader_prompt = reader_prompt
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
            if q.type:  # the question's type (2Wiki): metrics.json breaks the figures down by it
                row["type"] = q.type
            rows.append(row)
        t0 = time.perf_counter()
        answer_rows(self.llm, rows, self.corpus, top_n=self.answer_top_n, style=self.answer_style,
                    prompt=self.reader_prompt)
        self.answer_seconds += time.perf_counter() - t0
        return rows


class _PendingQueries(L.LightningDataModule):
    """The queries left to retrieve and the directory their rows go to, as rank 0 decided them.

    Args:
        queries: every query of the dataset (each process loaded the same file).
        todo_ids: ids left to retrieve, in query order; ``None`` on the other ranks (they take rank 0's).
        out_dir: the run directory; ``None`` on the other ranks.
        batch_size: queries per batch.
    """

    def __init__(self, queries: list[Query], todo_ids: list[str] | None, out_dir: Path | None,
                 batch_size: int) -> None:
        super().__init__()
        self.queries, self.todo_ids, self.out_dir, self.batch_size = queries, todo_ids, out_dir, batch_size

    def predict_dataloader(self) -> torch.utils.data.DataLoader:
        # Called once the process group is up: the other ranks read no resume state of their own (rank 0 may be
        # appending to it) and may have resolved another `out` (e.g. one stamped with their start time).
        todo_ids, out = self.trainer.strategy.broadcast((self.todo_ids, str(self.out_dir)), src=0)
        self.todo_ids, self.out_dir = todo_ids, Path(out)
        by_id = {q.id: q for q in self.queries}
        return torch.utils.data.DataLoader(_QueryList([by_id[i] for i in todo_ids]), batch_size=self.batch_size,
                                           shuffle=False, collate_fn=list)


class _AppendWriter(BasePredictionWriter):
    """Appends each batch's rows durably to the data module's directory: to ``predictions.jsonl``, or one shard
    per process."""

    def __init__(self) -> None:
        super().__init__(write_interval="batch")

    def target(self, trainer: L.Trainer) -> Path:
        out_dir = trainer.datamodule.out_dir
        if trainer.world_size == 1:
            return out_dir / PREDICTIONS
        return out_dir / f"predictions.rank{trainer.global_rank}.jsonl"

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        with self.target(trainer).open("a", encoding="utf-8") as handle:
            append_durably(handle, [json.dumps(row, ensure_ascii=False) for row in prediction])


@dataclass
class _QueryTimeCounters:
    """One process's counters that the predict loop moves: skipped LLM steps, LLM and reader usage per task,
    answer seconds. ``take`` them before and after the loop; other ranks send ``after.since(before)`` to rank 0."""

    skipped: Counter[str] = field(default_factory=Counter)
    llm: dict[str, TaskStats] = field(default_factory=dict)
    reader: dict[str, TaskStats] = field(default_factory=dict)
    answer_seconds: float = 0.0

    @classmethod
    def take(cls, retriever: Retriever, accounting: Accounting | None, reader_accounting: Accounting | None,
             module: RetrievalModule | None = None) -> _QueryTimeCounters:
        return cls(Counter(getattr(retriever, "skipped", {})),
                   accounting.snapshot() if accounting is not None else {},
                   reader_accounting.snapshot() if reader_accounting is not None else {},
                   module.answer_seconds if module is not None else 0.0)

    def since(self, before: _QueryTimeCounters) -> _QueryTimeCounters:
        return _QueryTimeCounters(self.skipped - before.skipped, stats_since(self.llm, before.llm),
                                  stats_since(self.reader, before.reader), self.answer_seconds - before.answer_seconds)

    def add_to(self, retriever: Retriever, accounting: Accounting | None, reader_accounting: Accounting | None,
               module: RetrievalModule) -> None:
        if self.skipped:
            retriever.skipped.update(self.skipped)
        if accounting is not None:
            accounting.merge(self.llm)
        if reader_accounting is not None:
            reader_accounting.merge(self.reader)
        module.answer_seconds += self.answer_seconds  # summed over processes

    @property
    def llm_calls(self) -> int:
        return sum(s.calls for s in self.llm.values())

    @property
    def reader_calls(self) -> int:
        return sum(s.calls for s in self.reader.values())


def _log_files(out: Path) -> list[Path]:
    return [out / PREDICTIONS, *sorted(out.glob("predictions.rank*.jsonl"))]


def is_worker_process() -> bool:
    """True in a process that a DDP launcher started for rank > 0 (Lightning's children of ``devices > 1``,
    torchrun, SLURM): it retrieves its shard for rank 0 and writes no run files of its own."""
    from lightning.fabric.utilities.rank_zero import rank_zero_only

    return getattr(rank_zero_only, "rank", 0) != 0


def resume_key(dataset: Dataset, retriever: Retriever, top_k: int, answering: bool,
               answer_style: str = "short", reader_prompt: str = "grounded") -> str:
    corpus = Hasher()
    for pid in dataset.corpus.ids:
        corpus.update(pid).update(b"\0")
    spec = {"dataset": dataset.name, "corpus": corpus.hexdigest(), "retriever": type(retriever).__qualname__,
            "name": getattr(retriever, "name", ""), "top_k": top_k, "answering": answering}
    if answering and answer_style != "short":  # short answers keep the key rows were written under before
        spec["answer_style"] = answer_style
    if answering and reader_prompt != "grounded":
        spec["reader_prompt"] = reader_prompt
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
                        index_encode_seconds: float | None = None,
                        llm: LanguageModel | None = None, answer_top_n: int = 5, resume: bool = True,
                        reader_llm: LanguageModel | None = None, answer_style: str = "short",
                        labels: dict[str, Any] | None = None, cost_since: CostMark | None = None,
                        reader_prompt: str = "grounded") -> dict[str, Any]:
    """Retrieve every query of ``dataset``, answer it (the retriever's own answer, else the reader on the top
    ``answer_top_n`` passages when an LLM is available; ``answer_top_n=0`` skips the reader), and score both.

    Args:
        llm: the retrieval LLM (the retriever's); its label marks the figures (LLM-free, oracle, model).
        reader_llm: the QA reader (default: ``llm``) — another model or endpoint than the one that scores edges
            or filters facts, as CatRAG and HippoRAG 2 run it.
        answer_style: the reader's ``short`` answers or ``explanatory`` ones (an explanation plus the short answer
            that EM / F1 score).
        reader_prompt: the QA reader's prompt, ``grounded`` or ``hipporag2`` (HippoRAG 2's reader structure).
        labels: more labels of how the figures were obtained, recorded in the metrics (e.g. ``{"models":
            "substituted"}``, ``models_used`` per role, ``data``: the dataset's sizes and digests).
        index_encode_seconds: of ``index_seconds``, the time the embedder spent encoding (cache misses only;
            recorded as ``index_encode_seconds``).
        cost_since: where the index phase began (:class:`~hyperrag.eval.cost.CostMark`, taken before OpenIE
            and ``index()``); ``None``: the LLM calls made before the loop and ``index_seconds``.

    Returns the metrics dict (empty on ranks other than 0).
    """
    reader = reader_llm if reader_llm is not None else llm
    answering = bool(answer_top_n and getattr(reader, "available", False))
    top = max(top_k, max(ks))
    module = RetrievalModule(retriever, dataset, top, reader, answer_top_n if answering else 0, answer_style,
                             reader_prompt)
    trainer = L.Trainer(accelerator=accelerator, devices=devices, logger=False, enable_checkpointing=False,
                        enable_model_summary=False, callbacks=[_AppendWriter()],
                        enable_progress_bar=len(dataset.queries) > batch_size)
    # Before the launch only Lightning's environment knows the rank: the launching process is local rank 0 of
    # node 0; processes it started (or a cluster launched) are not, and leave the resume state to rank 0.
    launcher = trainer.node_rank == 0 and trainer.local_rank == 0
    out = Path(out_dir)
    key = resume_key(dataset, retriever, top, answering, answer_style, reader_prompt)
    done: dict[str, dict[str, Any]] = {}
    todo_ids: list[str] | None = None
    if launcher:
        out.mkdir(parents=True, exist_ok=True)
        done = finished_rows(out, key, {q.id for q in dataset.queries}, resume)
        todo_ids = [q.id for q in dataset.queries if q.id not in done]
        if done:
            log.info("batch retrieval: %d/%d queries already in %s; %d to go", len(done), len(dataset.queries),
                     out / PREDICTIONS, len(todo_ids))
    accounting = getattr(llm, "accounting", None)
    reader_accounting = getattr(reader, "accounting", None) if reader is not llm else None
    before = _QueryTimeCounters.take(retriever, accounting, reader_accounting)
    t0 = time.perf_counter()
    rank, processes = 0, 1
    # Once other processes exist every rank enters the loop, even with nothing left: they cannot know.
    joined = torch.distributed.is_available() and torch.distributed.is_initialized()
    if todo_ids or joined or not launcher:
        data = _PendingQueries(dataset.queries, todo_ids, out if launcher else None, batch_size)
        trainer.predict(module, datamodule=data, return_predictions=False)
        todo_ids = data.todo_ids
        rank, processes = trainer.global_rank, trainer.world_size
        if processes > 1:
            # Other ranks' query-time LLM calls, skipped steps and answer time, merged into rank 0's counters.
            mine = _QueryTimeCounters.take(retriever, accounting, reader_accounting, module).since(before)
            gathered: list[Any] = [None] * processes
            torch.distributed.all_gather_object(gathered, mine)
            if rank == 0:
                for theirs in gathered[1:]:
                    theirs.add_to(retriever, accounting, reader_accounting, module)
        trainer.strategy.barrier()
    assert todo_ids is not None
    seconds = time.perf_counter() - t0
    if rank != 0:
        return {}
    loop_end = CostMark.now(llm, reader)  # rank 0's counters hold the other ranks' by now
    loop_end.seconds = t0 + seconds
    calls_before = before.llm_calls
    reader_calls_before = before.reader_calls
    rows_by_id = finished_rows(out, key, {q.id for q in dataset.queries}) if todo_ids else done
    rows = [rows_by_id[q.id] for q in dataset.queries if q.id in rows_by_id]
    missing = len(dataset.queries) - len(rows)
    if missing:
        raise RuntimeError(f"{missing} queries have no prediction row in {out}")
    metrics = score_rows(rows, ks, answer_top_n, f1_answer=f1_answer_of(dataset.name))
    metrics.update({"resumed_queries": len(done), "retrieve_seconds": round(seconds, 3),
                    "queries_per_second": round(len(todo_ids) / max(seconds, 1e-9), 2)})
    if processes > 1:
        metrics["processes"] = processes  # DDP ranks that retrieved a shard
    if "answer_failures" in metrics:
        metrics["answer_seconds"] = round(module.answer_seconds, 3)
    if todo_ids:  # per-query latency of retrieval (the reader's answers apart) and of each timed stage
        n = len(todo_ids)
        metrics["latency_seconds"] = round((seconds - module.answer_seconds) / n, 4)
        for stage, total in sorted(getattr(retriever, "stage_seconds", {}).items()):
            metrics[f"{stage}_latency_seconds"] = round(total / n, 4)
    if accounting is not None and accounting.tasks:
        # query-time LLM calls (fact filter, edge scoring, summaries, answers), cache hits included
        metrics["llm_calls_per_query"] = round((accounting.total().calls - calls_before) / max(len(todo_ids), 1), 2)
    if reader_accounting is not None and reader_accounting.tasks:
        metrics["reader_calls_per_query"] = round(
            (reader_accounting.total().calls - reader_calls_before) / max(len(todo_ids), 1), 2)
    skipped = llm_steps_skipped(retriever, rows, answer_top_n, answering)
    metrics["llm_steps_skipped"] = skipped
    if skipped:
        log.warning("%s: configured LLM steps that did not run (no LLM, failed call or budget cap): %s",
                    getattr(retriever, "name", "retriever"), ", ".join(f"{k} {v}" for k, v in skipped.items()))
    metrics.update(run_labels(llm, reader, retriever))
    metrics.update(labels or {})
    atomic_write_jsonl(out / PREDICTIONS, rows)
    for shard in out.glob("predictions.rank*.jsonl"):
        shard.unlink()
    if index_seconds is not None:
        metrics["index_seconds"] = round(index_seconds, 3)
    if index_encode_seconds is not None:
        metrics["index_encode_seconds"] = round(index_encode_seconds, 3)
    loop_start = CostMark(t0, before.llm, before.reader)
    mark = cost_since or CostMark(t0 - (index_seconds or 0.0))
    metrics.update(run_cost(mark, loop_start, loop_end, len(todo_ids), has_llm=bool(getattr(llm, "available", False)),
                            has_reader=answering, reader_is_llm=reader is llm))
    info = retriever.describe()
    size = index_bytes(retriever, info)
    if size is not None:
        metrics["index_bytes"] = size
    record = {"dataset": dataset.name, **info, "metrics": metrics}
    groups = by_type(rows, ks, answer_top_n, f1_answer_of(dataset.name))
    if groups:
        record["by_type"] = groups
    if accounting is not None and accounting.tasks:
        record["llm_usage"] = accounting.to_dict()
    if reader_accounting is not None and reader_accounting.tasks:
        record["reader_llm_usage"] = reader_accounting.to_dict()
    atomic_write_json(out / "metrics.json", record)
    return metrics


def score_rows(rows: list[dict[str, Any]], ks: tuple[int, ...], answer_top_n: int,
               f1_answer: str = "short") -> dict[str, Any]:
    """Retrieval metrics of prediction rows, plus answer metrics (EM/F1/JSR, accuracy for multiple choice,
    failures) when they were answered (JSR's chain is the reader's top ``answer_top_n``; ``f1_answer``: which
    answer EM/F1 score, :func:`hyperrag.eval.qa.f1_answer_of`)."""
    metrics: dict[str, Any] = retrieval_metrics([r["ranked_ids"] for r in rows], [r["gold_ids"] for r in rows], ks)
    metrics["queries"] = len(rows)
    if any("answer" in r for r in rows):
        n = answer_top_n or 5
        # JSR needs the gold chain: without gold passages on any question there is none to report
        chain = [full_chain_at_k(r["ranked_ids"], r["gold_ids"], n) if r["gold_ids"] else 0.0 for r in rows] \
            if metrics["queries_with_gold"] else None
        metrics.update(qa_metrics([r.get("answer", "") for r in rows], [r["answers"] for r in rows], chain,
                                  [r.get("options") or [] for r in rows], [r.get("answer_index") for r in rows],
                                  short_answers=[r.get("short_answer") for r in rows], f1_answer=f1_answer))
        metrics["f1_answer"] = f1_answer
        metrics.update(option_accuracy([r.get("answer", "") for r in rows], [r.get("options") or [] for r in rows],
                                       [r.get("answer_index") for r in rows]))
        metrics["answer_failures"] = sum(not r.get("answer_ok", False) for r in rows)
    return metrics


def by_type(rows: list[dict[str, Any]], ks: tuple[int, ...], answer_top_n: int,
            f1_answer: str = "short") -> dict[str, dict[str, Any]]:
    """The figures of :func:`score_rows` per question type (the rows' ``type``: 2Wiki's compositional,
    comparison, ...), in order of first appearance; ``{}`` when no row has a type. Rows without one are left out
    of the breakdown (the overall figures keep them)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("type"):
            groups.setdefault(str(r["type"]), []).append(r)
    return {t: score_rows(group, ks, answer_top_n, f1_answer) for t, group in groups.items()}


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
    if getattr(retriever, "oracle_steps", ()):  # gold decided these steps: an upper bound whatever the LLM
        out["oracle_steps"] = list(retriever.oracle_steps)
    if isinstance(getattr(retriever, "protocol", None), str):  # "streaming" | "transductive" | "held-out graphs"
        out["protocol"] = retriever.protocol
    return out


def run_title(method: str, dataset: str, queries: int, metrics: dict[str, Any]) -> str:
    """The console title of a run's metrics table, labelled (LLM-free, upper bound (oracle), transductive)."""
    labels = [metrics.get("llm_label", "")]
    if metrics.get("reader_llm_label"):
        labels.append(f"reader: {metrics['reader_llm_label']}")
    if metrics.get("transductive"):
        labels.append("transductive")
    if metrics.get("oracle_steps"):
        labels.append(f"upper bound (oracle {', '.join(metrics['oracle_steps'])})")
    return f"{method} on {dataset} ({queries} queries) — {', '.join(x for x in labels if x)}"


def print_metrics_table(title: str, metrics: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    keys = [k for k in metrics if "@" in k or k in ("em", "f1", "jsr", "accuracy")]
    if not metrics.get("queries_with_gold", 1):
        Console().print(f"{title}: no question carries gold passages, so no recall, FCR or JSR"
                        + (f" ({', '.join(keys)} below)" if keys else ""), soft_wrap=True)
    if keys:
        table = Table(title=title)
        for k in keys:
            table.add_column(k, justify="right")
        table.add_row(*[f"{metrics[k]:.1f}" for k in keys])
        Console().print(table)
    extra = {k: v for k, v in metrics.items() if k not in keys and not k.startswith("cost.")}
    Console().print(extra)
    Console().print(cost_line(metrics))


def cost_line(metrics: dict[str, Any]) -> str:
    """One line of what the run cost (the ``cost.*`` keys in full are in ``metrics.json``)."""
    def part(phase: str) -> str:
        calls = metrics.get(f"cost.{phase}.llm_calls", 0)
        tokens = metrics.get(f"cost.{phase}.prompt_tokens", 0) + metrics.get(f"cost.{phase}.completion_tokens", 0)
        return f"{phase} {metrics.get(f'cost.{phase}.seconds', 0):.1f} s, {calls} LLM calls, {tokens:,} tokens"

    size = metrics.get("index_bytes")
    tail = f"; index on disk {size / 2**20:.1f} MiB" if isinstance(size, int) else ""
    return f"cost: {part('index')}; {part('query')}{tail}"
