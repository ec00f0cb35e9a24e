"""hyperrag's Hydra configs: ``retrieve.yaml``, ``train.yaml``, ``evaluate.yaml``, ``report.yaml``,
``holisqa.yaml`` and their groups (``data/``, ``method/``, ``llm/``, ``embedder/``, ``graph/``, ``hardware/``,
``task/``, ``trainer/``, ``logger/``, ``tracking/``, ``experiment/``, ``ablation/``).

The folder is ``hydra_configs/`` at the repository root (the scripts there use ``config_path="hydra_configs"``);
``hyperrag/conf`` is a link to it, so the configs ship inside the package (package data ``hyperrag.conf``) and the
command-line entries inside it (``python -m hyperrag.index refresh``, ``python -m hyperrag.holisqa``) find them
from an installed wheel as from a checkout.
"""

from __future__ import annotations

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent

__all__ = ["CONFIG_DIR"]
