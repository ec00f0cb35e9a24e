"""Batch retrieval: build or load the index, retrieve a query file, write predictions and metrics.

    python retrieve.py                                   # bundled sample, hipporag2
    python retrieve.py method=dense data=musique out=runs/dense
    python retrieve.py data=jsonl data.corpus=c.jsonl data.queries=q.jsonl method=bm25
    python retrieve.py method=hipporag2 index_dir=idx/ data=jsonl data.corpus=c.jsonl data.queries=q.jsonl
    python retrieve.py out=runs/x resume=false                  # rerun from scratch instead of resuming
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import hydra
from omegaconf import DictConfig

from hyperrag.errors import exit_on_input_error

log = logging.getLogger("retrieve")


@hydra.main(version_base="1.3", config_path="hyperrag/conf", config_name="retrieve")
@exit_on_input_error
def main(cfg: DictConfig) -> dict[str, Any]:
    return run(cfg)


def run(cfg: DictConfig) -> dict[str, Any]:
    import lightning as L
    from hydra.utils import instantiate

    from hyperrag.llm import build_llm
    from hyperrag.reporting.tracking import build_tracker
    from hyperrag.runners.batch_retrieval import print_metrics_table, run_batch_retrieval
    from hyperrag.runners.prepare import build_retriever, prepare_dataset

    L.seed_everything(cfg.seed, verbose=False)
    tracker = build_tracker(cfg)  # run_info.json now (seeds, versions, git commit); W&B + CSV when done
    dataset = instantiate(cfg.data)
    if cfg.limit_queries:  # a slice of the query file (quick runs with a slow LLM)
        dataset.queries = dataset.queries[: cfg.limit_queries]
    encoder = instantiate(cfg.embedder)
    with build_llm(cfg.llm) as llm:  # starts and stops a managed server; prints LLM usage at exit
        dataset = prepare_dataset(dataset, llm, cfg.cache_dir, cfg.index_dir,  # index_dir: its passages
                                  extraction=cfg.method.retriever.get("extraction"))
        retriever = build_retriever(instantiate(cfg.method.retriever), encoder, llm, cfg.index_dir)
        t0 = time.perf_counter()
        retriever.index(dataset)
        index_seconds = time.perf_counter() - t0
        metrics = run_batch_retrieval(dataset, retriever, cfg.out, top_k=cfg.top_k, batch_size=cfg.batch_size,
                                      ks=tuple(cfg.ks), accelerator=cfg.hardware.accelerator,
                                      devices=cfg.hardware.devices, index_seconds=index_seconds, llm=llm,
                                      answer_top_n=cfg.answer_top_n, resume=cfg.resume)
    if metrics:
        print_metrics_table(f"{cfg.method.name} on {dataset.name} ({len(dataset.queries)} queries)", metrics)
        tracker.finish(metrics)
        log.info("predictions and metrics in %s", cfg.out)
    return metrics


if __name__ == "__main__":
    main()
