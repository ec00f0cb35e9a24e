"""Batch retrieval over a query file with Lightning's predict loop (sharded when devices > 1).

Writes ``predictions.jsonl`` (per query: ranked passage ids and scores) and ``metrics.json``.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import BasePredictionWriter

from hyperrag.data.types import Dataset, Query
from hyperrag.eval.qa import qa_metrics
from hyperrag.eval.retrieval import full_chain_at_k, retrieval_metrics
from hyperrag.generation.reader import answer_queries
from hyperrag.retrievers.base import Retriever

log = logging.getLogger(__name__)


class _QueryList(torch.utils.data.Dataset):
    def __init__(self, queries: list[Query]) -> None:
        self.queries = queries

    def __len__(self) -> int:
        return len(self.queries)

    def __getitem__(self, i: int) -> Query:
        return self.queries[i]


class RetrievalModule(L.LightningModule):
    """Wraps a retriever so Lightning can shard query batches over devices/processes."""

    def __init__(self, retriever: Retriever, dataset: Dataset, top_k: int) -> None:
        super().__init__()
        self.retriever = retriever
        self.passage_ids = dataset.corpus.ids
        self.top_k = top_k

    def transfer_batch_to_device(self, batch: list[Query], device: torch.device, dataloader_idx: int) -> list[Query]:
        return batch  # plain query records; the retriever places its own tensors

    def predict_step(self, batch: list[Query], batch_idx: int) -> list[dict[str, Any]]:
        out = self.retriever.retrieve([q.question for q in batch], self.top_k)
        rows = []
        for i, q in enumerate(batch):
            row = {"id": q.id, "question": q.question,
                   "ranked_ids": [self.passage_ids[j] for j in out.indices[i].tolist()],
                   "scores": [round(float(s), 6) for s in out.scores[i].tolist()],
                   "gold_ids": list(q.gold_ids), "answers": list(q.answers)}
            if out.details:
                row["details"] = out.details[i]
            rows.append(row)
        return rows


class _ShardWriter(BasePredictionWriter):
    """Each process appends its rows to its own shard; rank 0 merges them in query order."""

    def __init__(self, out_dir: Path) -> None:
        super().__init__(write_interval="batch")
        self.out_dir = out_dir

    def shard(self, rank: int) -> Path:
        return self.out_dir / f"predictions.rank{rank}.jsonl"

    def write_on_batch_end(self, trainer, pl_module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        with self.shard(trainer.global_rank).open("a") as handle:
            for row in prediction:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def run_batch_retrieval(dataset: Dataset, retriever: Retriever, out_dir: str | Path, *, top_k: int = 10,
                        batch_size: int = 64, ks: tuple[int, ...] = (2, 5, 10), accelerator: str = "auto",
                        devices: int | str = 1, index_seconds: float | None = None, llm: Any = None,
                        answer_top_n: int = 5) -> dict[str, Any]:
    """Retrieve every query of ``dataset``, answer it from the top ``answer_top_n`` passages when an LLM is
    available (``answer_top_n=0`` skips answering), and score both. Returns the metrics dict."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    writer = _ShardWriter(out)
    for stale in out.glob("predictions.rank*.jsonl"):
        stale.unlink()
    trainer = L.Trainer(accelerator=accelerator, devices=devices, logger=False, enable_checkpointing=False,
                        enable_model_summary=False, callbacks=[writer], enable_progress_bar=len(dataset.queries) > batch_size)
    loader = torch.utils.data.DataLoader(_QueryList(dataset.queries), batch_size=batch_size, shuffle=False,
                                         collate_fn=list)
    module = RetrievalModule(retriever, dataset, max(top_k, max(ks)))
    accounting = getattr(llm, "accounting", None)
    calls_before = accounting.total().calls if accounting is not None else 0
    t0 = time.perf_counter()
    trainer.predict(module, loader, return_predictions=False)
    seconds = time.perf_counter() - t0
    trainer.strategy.barrier()
    if trainer.global_rank != 0:
        return {}
    order = {q.id: i for i, q in enumerate(dataset.queries)}
    rows = [json.loads(line) for shard in sorted(out.glob("predictions.rank*.jsonl"))
            for line in shard.read_text().splitlines()]
    rows.sort(key=lambda r: order[r["id"]])
    metrics: dict[str, Any] = retrieval_metrics([r["ranked_ids"] for r in rows], [r["gold_ids"] for r in rows], ks)
    metrics.update({"queries": len(rows), "retrieve_seconds": round(seconds, 3),
                    "queries_per_second": round(len(rows) / max(seconds, 1e-9), 2)})
    if answer_top_n and getattr(llm, "available", False):
        t1 = time.perf_counter()
        answers = answer_queries(llm, [r["question"] for r in rows], [r["ranked_ids"] for r in rows],
                                 dataset.corpus, top_n=answer_top_n)
        for row, ans in zip(rows, answers):
            row.update(ans)
        chain = [full_chain_at_k(r["ranked_ids"], r["gold_ids"], answer_top_n) if r["gold_ids"] else 0.0
                 for r in rows]
        metrics.update(qa_metrics([r["answer"] for r in rows], [r["answers"] for r in rows], chain))
        metrics["answer_failures"] = sum(not a["answer_ok"] for a in answers)
        metrics["answer_seconds"] = round(time.perf_counter() - t1, 3)
    if accounting is not None and accounting.tasks:
        # query-time LLM calls (fact filter, edge scoring, summaries, answers), cache hits included
        metrics["llm_calls_per_query"] = round((accounting.total().calls - calls_before) / max(len(rows), 1), 2)
    with (out / "predictions.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    for shard in out.glob("predictions.rank*.jsonl"):
        shard.unlink()
    if index_seconds is not None:
        metrics["index_seconds"] = round(index_seconds, 3)
    record = {"dataset": dataset.name, **retriever.describe(), "metrics": metrics}
    if accounting is not None and accounting.tasks:
        record["llm_usage"] = accounting.to_dict()
    (out / "metrics.json").write_text(json.dumps(record, indent=1, default=str))
    return metrics


def print_metrics_table(title: str, metrics: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    keys = [k for k in metrics if "@" in k or k in ("em", "f1", "jsr")]
    for k in keys:
        table.add_column(k, justify="right")
    table.add_row(*[f"{metrics[k]:.1f}" for k in keys])
    Console().print(table)
    extra = {k: v for k, v in metrics.items() if k not in keys}
    Console().print(extra)
