"""The entry points' own settings (top-level keys of ``retrieve.yaml`` / ``train.yaml``) and the check every
composed config goes through before anything is loaded or built.

``check_retrieve_config`` / ``check_train_config`` stop a bad value with one line naming its key and exit
code 2 (:func:`hyperrag.errors.exit_on_input_error`)::

    error: batch_size: must be >= 1, got 0
    error: method.retriever.train.batch_size: must be >= 1, got 0
    error: task.datamodule.num_negatives: must be >= 1, got -3
"""

from __future__ import annotations

from typing import Any, Literal

from hyperrag.config.validation import NonNegativeInt, PositiveInt, check_config, check_keys, settings


@settings
class RetrieveRunSettings:
    """``retrieve.yaml``: passages kept per query, queries per batch, the recall cut-offs, passages the reader
    sees (0: retrieval only), how answers are written (short / explanatory), the query-file slice (``null``: all), seed, resume, verbose console."""

    top_k: PositiveInt
    batch_size: PositiveInt
    ks: tuple[PositiveInt, ...]
    answer_top_n: NonNegativeInt
    answer_style: Literal["short", "explanatory"]
    reader_prompt: Literal["auto", "grounded", "hipporag2"]
    shared_graph: Literal["graphrag"] | None
    limit_queries: PositiveInt | None
    seed: int
    resume: bool
    verbose: bool


@settings
class TrainRunSettings:
    """``train.yaml``: seed, retrain, torch intra-op threads (``null``: torch's default), verbose console."""

    seed: int
    retrain: bool
    torch_threads: PositiveInt | None
    verbose: bool


def check_retrieve_config(cfg: Any) -> None:
    """Every setting of a composed ``retrieve`` config, checked: the run's keys, then every ``_target_``."""
    check_keys(cfg, RetrieveRunSettings)
    check_config(cfg, "")


def check_train_config(cfg: Any) -> None:
    """Every setting of a composed ``train`` config, checked (the run's own keys, then every ``_target_``: the
    task and its model / data module / settings, the method a task composes, the embedder, the trainer)."""
    check_keys(cfg, TrainRunSettings)
    check_config(cfg, "")


__all__ = ["RetrieveRunSettings", "TrainRunSettings", "check_retrieve_config", "check_train_config"]
