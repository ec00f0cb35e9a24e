"""Train a model: compose the config, instantiate the task, fit with Lightning, save to models/, report.

    python train.py                                          # task=poincare on the bundled sample
    python train.py task=poincare data=musique               # the ball retrieve.py method=hyperrag loads
    python train.py task=poincare_openie data=musique trainer.max_epochs=50
    python train.py task=poincare_tree logger=csv            # tree closure (the benchmark's workload)

The checkpoint goes to ``<models_dir>/<task>/<data>-<key>/model.ckpt`` with ``metrics.json`` and
``config.yaml`` beside it; ``key`` hashes the data and every setting, so a rerun finds the model and only
evaluates it (``retrain=true`` forces training). An interrupted fit (SIGKILL included) resumes on the rerun from the
``last.ckpt`` written after each epoch and inside long epochs (``resume.every_seconds``, ``resume.every_n_steps``) to
``<data>-<key>/.partial/`` (``resume.enabled=false``: start over);
see :mod:`hyperrag.utils.resume`. The run directory ``<out>`` holds the task's plot (the
Poincaré disk for ``poincare``), ``metrics.json`` and the logger's files (W&B offline unless
``WANDB_API_KEY`` is set).

A task (the ``_target_`` of ``hydra_configs/task/*.yaml``) provides: ``name``, ``data_name``,
``key(**extra) -> str``, ``build_model() -> LightningModule``, ``build_datamodule() -> LightningDataModule``,
``load(checkpoint) -> LightningModule``, ``evaluate(model) -> dict`` and ``plot(model, path) -> Path``;
optionally ``plot_filename`` (default ``<name>.png``). See :mod:`hyperrag.training.tasks`.
"""

from __future__ import annotations

import logging
import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # torch's huge pages for large CPU buffers: see retrieve.py
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if not os.environ.get("WANDB_API_KEY"):
    os.environ.setdefault("WANDB_MODE", "offline")

import hydra
from omegaconf import DictConfig, OmegaConf

from hyperrag.errors import exit_on_input_error

log = logging.getLogger("train")

# logger/wandb.yaml: offline unless an API key is configured
OmegaConf.register_new_resolver("wandb_offline", lambda: not os.environ.get("WANDB_API_KEY"), replace=True)


@hydra.main(version_base="1.3", config_path="hydra_configs", config_name="train")
@exit_on_input_error
def main(cfg: DictConfig) -> dict[str, Any]:
    return run(cfg)


def run(cfg: DictConfig) -> dict[str, Any]:
    from hyperrag.runners.run_settings import check_train_config

    check_train_config(cfg)  # a bad setting stops here, before anything is loaded, with one line naming it

    import lightning  # noqa: F401 - imported before the console is set up: it installs a handler of its own

    from hyperrag.training.fit import fit_task, print_metrics
    from hyperrag.utils.console import configure_console

    configure_console(cfg.verbose)  # progress bars, warnings, final tables; every request only with verbose=true

    result = fit_task(cfg)
    print_metrics(result)
    return result.metrics


if __name__ == "__main__":
    from hyperrag.config.command_line import check_command_line

    check_command_line("train")  # a bad choice or override: one line, exit 2 (not Hydra's paragraph)
    main()
