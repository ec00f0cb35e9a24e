"""Batch retrieval: build or load the index, retrieve a query file, write predictions and metrics.

    python retrieve.py                                   # bundled sample, hipporag2
    python retrieve.py method=dense data=musique out=runs/dense
    python retrieve.py data=jsonl data.corpus=c.jsonl data.queries=q.jsonl method=bm25
    python retrieve.py method=hipporag2 index_dir=idx/ data=jsonl data.corpus=c.jsonl data.queries=q.jsonl
    python retrieve.py out=runs/x resume=false                  # rerun from scratch instead of resuming
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Torch backs large CPU buffers with transparent huge pages (its THP_MEM_ALLOC_ENABLE switch): in a VM, touching
# fresh 4 KiB pages of a 72 MB [1000, N] PPR output cost ~80 ms, with huge pages ~15 ms (BENCHMARKS.md, issue 21).
# bench_ppr runs with the same switch; export THP_MEM_ALLOC_ENABLE=0 to turn it off.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import hydra
from omegaconf import DictConfig

from hyperrag.errors import exit_on_input_error

if TYPE_CHECKING:
    from hyperrag.data.types import Dataset
    from hyperrag.protocols import LanguageModel

log = logging.getLogger("retrieve")


@hydra.main(version_base="1.3", config_path="hydra_configs", config_name="retrieve")
@exit_on_input_error
def main(cfg: DictConfig) -> dict[str, Any]:
    return run(cfg)


def run(cfg: DictConfig) -> dict[str, Any]:
    from hyperrag.runners.run_settings import check_retrieve_config

    check_retrieve_config(cfg)  # a bad setting stops here, before anything is loaded, with one line naming it
    from hyperrag.runners.paper_tables import check_paper_data

    if not check_paper_data(cfg):  # a paper table's dataset missing under paper_data: this job is skipped
        return {}

    import lightning as L

    from hyperrag.utils.console import configure_console

    configure_console(cfg.verbose)  # progress bars, warnings, final tables; every request only with verbose=true
    from hydra.utils import instantiate

    from hyperrag.eval.cost import CostMark
    from hyperrag.generation.reader import reader_prompt
    from hyperrag.index.lock import use_lock_settings
    from hyperrag.llm import build_llm
    from hyperrag.reporting.run_info import dataset_record
    from hyperrag.reporting.tracking import build_tracker
    from hyperrag.runners.batch_retrieval import (
        is_worker_process,
        print_metrics_table,
        run_batch_retrieval,
        run_title,
    )
    from hyperrag.runners.cross_fit import run_cross_fitted
    from hyperrag.runners.prepare import build_retriever, defer_to_extractor, prepare_dataset, retriever_class
    from hyperrag.utils.artifacts import check_unseen

    settings = instantiate(cfg.method.retriever)  # the method's typed settings (hyperrag.retrievers.settings)
    extractor = instantiate(cfg.extractor)  # the extraction every graph is built from (extractor=llm|spacy)
    settings = defer_to_extractor(settings, extractor)  # extractor=spacy: HugRAG's own LLM extraction off
    run_labels = substituted_models(cfg)
    L.seed_everything(cfg.seed, verbose=False)
    check_llm_required(cfg)
    check_devices(cfg)
    # run_info.json now (seeds, versions, git commit); W&B + CSV when done. With hardware.devices > 1 the
    # processes Lightning starts rerun this script to retrieve their shard: only rank 0 records the run.
    tracker = None if is_worker_process() else build_tracker(cfg)
    dataset = instantiate(cfg.data)
    if cfg.limit_queries:  # a slice of the query file (quick runs with a slow LLM)
        dataset.queries = dataset.queries[: cfg.limit_queries]
    encoder = instantiate(cfg.embedder)
    # llm=oracle answers from this query file's gold; the reader may be another backend (reader_llm=...); an index
    # the run builds waits index_lock.timeout_s (overrides included) for another writer of it
    with use_lock_settings(instantiate(cfg.index_lock)), build_llm(cfg.llm, dataset) as llm, \
            reader_for(cfg, llm, dataset) as reader:
        # the index phase's cost (metrics cost.index.*) runs from here: OpenIE, the method's index(), and with
        # cv_folds each fold's training since the last fold's queries
        cost_mark = [CostMark.now(llm, reader)]
        method = retriever_class(settings)
        dataset = prepare_dataset(dataset, llm, cfg.cache_dir, cfg.index_dir,  # index_dir: its passages
                                  extraction=getattr(settings, "extraction", None),
                                  shared_graph=cfg.shared_graph, extractor=extractor,
                                  uses_triples=method.uses_triples, own_extraction=method.own_extraction())
        run_labels["data"] = dataset_record(dataset)  # sizes and digests of what was scored (reports name it)
        run_labels["extraction"] = dataset.extraction  # {"source": spacy|llm|file|none, "model", "path"}
        if tracker is not None and os.path.isfile(os.path.join(cfg.out, "run_info.json")):
            from hyperrag.reporting.run_info import update_run_info

            update_run_info(cfg.out, extraction=dataset.extraction)

        def run_fold(data: Any, trained: dict[str, str], out: str) -> dict[str, Any]:
            """Index and retrieve ``data`` with the method's settings (``trained``: checkpoints to use)."""
            retriever = build_retriever(dataclasses.replace(settings, **trained), encoder, llm, cfg.index_dir,
                                        device=cfg.hardware.device)
            t0 = time.perf_counter()
            encoded = getattr(encoder, "encode_seconds", None)
            retriever.index(data)
            index_seconds = time.perf_counter() - t0
            # the embedder's share of the index phase (the floor on CPU); cache hits cost nothing here
            encode_seconds = getattr(encoder, "encode_seconds", 0.0) - encoded if encoded is not None else None
            # no query is scored by an artifact trained on it (exit 2), unless the method is transductive by design
            if check_unseen(retriever.artifacts(), [q.id for q in data.queries]):
                retriever.saw_questions = True
            metrics = run_batch_retrieval(data, retriever, out, top_k=cfg.top_k, batch_size=cfg.batch_size,
                                          ks=tuple(cfg.ks), accelerator=cfg.hardware.accelerator,
                                          devices=cfg.hardware.devices, index_seconds=index_seconds,
                                          index_encode_seconds=encode_seconds, llm=llm,
                                          answer_top_n=cfg.answer_top_n, resume=cfg.resume, reader_llm=reader,
                                          answer_style=cfg.answer_style, labels=run_labels,
                                          reader_prompt=reader_prompt(cfg),
                                          cost_since=cost_mark[0])
            cost_mark[0] = CostMark.now(llm, reader)  # the next fold's index phase starts here
            return metrics

        if cfg.get("cv_folds"):  # each fold scored by artifacts trained on the other folds
            metrics = run_cross_fitted(cfg, dataset, run_fold)
        else:
            metrics = run_fold(dataset, {}, cfg.out)
    if metrics and tracker is not None:
        print_metrics_table(run_title(cfg.method.name, dataset.name, len(dataset.queries), metrics), metrics)
        tracker.finish(metrics)
        print(f"predictions and metrics in {cfg.out}")
    return metrics


def substituted_models(cfg: DictConfig) -> dict[str, Any]:
    """The model each role used (``models_used``) and, where the preset names the paper's (``paper_models``), the
    roles that differ: any such role, or ``models=offline``, labels the run ``substituted models`` (said once)."""
    from omegaconf import OmegaConf

    from hyperrag.reporting.run_info import role_models, substituted_roles

    used = role_models(cfg)
    paper = OmegaConf.to_container(cfg.paper_models, resolve=True) if cfg.get("paper_models") else {}
    roles = substituted_roles(paper, used)
    labels: dict[str, Any] = {"models_used": used}
    if paper:
        labels["paper_models"] = paper
    if cfg.get("models_choice") != "offline" and not roles:
        return labels
    swapped = ", ".join(f"{r} {used[r]} for {paper[r]}" for r in roles) or "the embedded models in every role"
    log.warning("substituted models (%s): the figures are labelled 'substituted models'%s", swapped,
                " (models=offline)" if cfg.get("models_choice") == "offline" else "")
    return {**labels, "models": "substituted", "substituted_roles": roles}


def check_llm_required(cfg: DictConfig) -> None:
    """A paper-table experiment (``requires_llm``) with ``llm=none`` stops unless ``allow_llm_free=true``."""
    from hyperrag.errors import InputError

    no_llm = str(cfg.llm.get("_target_", "")).endswith(".NoLLM")
    if cfg.get("requires_llm") and no_llm and not cfg.get("allow_llm_free"):
        raise InputError("this experiment reproduces a paper table and needs an LLM backend (llm=local, vllm, "
                         "openai_compatible or oracle); allow_llm_free=true runs its LLM-free form, labelled as such",
                         field="llm")


def check_devices(cfg: DictConfig) -> None:
    """Cross-fitting trains per-fold artifacts and reads each fold's rows between folds: it runs in one process
    (``hardware.devices=1``); several devices shard one plain run."""
    from hyperrag.errors import InputError

    devices = cfg.hardware.get("devices", 1)
    if cfg.get("cv_folds") and devices not in (1, "1"):
        raise InputError(f"cv_folds runs in one process, set it to 1 (got {devices})", setting="hardware.devices")


def reader_for(cfg: DictConfig, llm: LanguageModel, dataset: Dataset) -> AbstractContextManager[LanguageModel]:
    """The QA reader, to enter as a context manager: the retrieval LLM itself (``reader_llm=same``; entered
    already) or its own backend."""
    from contextlib import nullcontext

    from hyperrag.llm import build_llm

    node = cfg.get("reader_llm")
    if node is None or node.get("same_as_llm", False):
        return nullcontext(llm)
    reader = build_llm(node, dataset)
    reader.role = "reader"
    return reader


if __name__ == "__main__":
    from hyperrag.config.command_line import check_command_line

    check_command_line("retrieve")  # a bad choice or override: one line, exit 2 (not Hydra's paragraph)
    main()
