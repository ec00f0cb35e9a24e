"""hyperrag's Hydra configs: ``retrieve.yaml``, ``train.yaml``, ``evaluate.yaml``, ``report.yaml``,
``holisqa.yaml`` and their groups (``data/``, ``method/``, ``llm/``, ``embedder/``, ``graph/``, ``hardware/``,
``task/``, ``trainer/``, ``logger/``, ``tracking/``, ``experiment/``, ``ablation/``).

They ship inside the package (package data), so the command-line entries inside it (``python -m
hyperrag.index refresh``, ``python -m hyperrag.holisqa``) find them from an installed wheel as from a
checkout; the scripts at the repository root name the same folder (``config_path="hyperrag/conf"``).
"""

from __future__ import annotations

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent

__all__ = ["CONFIG_DIR"]
