"""Provenance of trained artifacts: which dataset and which questions shaped them.

Every artifact ``train.py`` saves (a PPO policy, a causal pair classifier, a Poincaré ball...) gets an
``artifact.json`` beside its ``model.ckpt``: the task, the dataset, the ids of the queries whose text or labels it
trained on, a compatibility key of the settings that must match for reuse, and whether the method is
transductive by design (HyperRAG builds its graphs from the question set). Retrieval uses it to

* pick ``auto`` checkpoints only among artifacts of the same dataset and compatible settings
  (:func:`find_artifact`), and
* refuse to score a query with an artifact that trained on it (:func:`check_unseen`), unless the method is
  transductive — then the run says so (``metrics.json: "transductive": true``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hyperrag.errors import InputError

RECORD = "artifact.json"


@dataclass(frozen=True)
class ArtifactRecord:
    """Attributes:
        task: the training task (``ppo``, ``causal_pair``, ``poincare``...).
        dataset: the dataset it trained on (``data.name``).
        query_ids: the queries whose text or labels it trained on (empty: none, e.g. a classifier trained on
            another corpus).
        compatibility: a key of the settings that must match for a retriever to use it.
        transductive: the method builds it from the very questions it scores, by design.
        checkpoint: where the weights are (filled in when read).
    """

    task: str
    dataset: str
    query_ids: tuple[str, ...] = ()
    compatibility: str = ""
    transductive: bool = False
    checkpoint: str = field(default="", compare=False)

    def seen(self, query_ids: Iterable[str]) -> list[str]:
        """The given queries this artifact trained on, in the given order."""
        trained = set(self.query_ids)
        return [q for q in query_ids if q in trained]


def write_record(model_dir: str | Path, record: ArtifactRecord) -> Path:
    from hyperrag.utils.atomic import atomic_write_json

    path = Path(model_dir) / RECORD
    atomic_write_json(path, {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(record).items()
                             if k != "checkpoint"})
    return path


def read_record(checkpoint: str | Path) -> ArtifactRecord | None:
    """The record beside a ``model.ckpt`` (``None`` for artifacts saved before records existed)."""
    path = Path(checkpoint).with_name(RECORD)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ArtifactRecord(str(data["task"]), str(data["dataset"]), tuple(str(q) for q in data.get("query_ids", [])),
                              str(data.get("compatibility", "")), bool(data.get("transductive", False)),
                              str(checkpoint))
    except (ValueError, KeyError, TypeError):
        return None


def find_artifact(models_dir: str | Path, task: str, dataset: str, compatibility: str | None = None,
                  unseen: Iterable[str] = ()) -> Path | None:
    """The newest ``<models_dir>/<task>/*/model.ckpt`` trained on ``dataset`` with the given compatibility key
    (``None``: any) that saw none of the ``unseen`` query ids; ``None`` when there is no such artifact.
    Artifacts without a record (older versions) are never picked."""
    root = Path(models_dir) / task
    if not root.is_dir():
        return None
    avoid = set(unseen)
    best: tuple[float, Path] | None = None
    for ckpt in root.glob("*/model.ckpt"):
        rec = read_record(ckpt)
        if rec is None or rec.dataset != dataset or (compatibility is not None and rec.compatibility != compatibility):
            continue
        if avoid and rec.seen(avoid):
            continue
        stamp = ckpt.stat().st_mtime
        if best is None or stamp > best[0]:
            best = (stamp, ckpt)
    return best[1] if best else None


def check_unseen(records: Iterable[tuple[str, ArtifactRecord | None, str]], query_ids: list[str]) -> bool:
    """Refuse (:class:`InputError`) to score queries with an artifact that trained on them.

    Args:
        records: per loaded artifact, ``(setting name, record or None, checkpoint path)``.
        query_ids: the queries about to be scored.

    Returns:
        ``True`` when a transductive-by-design artifact saw the queries (the run must say so).
    """
    transductive = False
    for setting, rec, path in records:
        if rec is None:
            raise InputError(f"{path} has no {RECORD} (saved before artifacts recorded what they trained on), so "
                             "it cannot be shown not to have seen the evaluation questions; retrain it", field=setting)
        seen = rec.seen(query_ids)
        if not seen:
            continue
        if rec.transductive:
            transductive = True
            continue
        raise InputError(f"{path} was trained on {len(seen)} of the {len(query_ids)} queries being scored (e.g. "
                         f"{seen[0]!r}); use an artifact trained on other questions, or cross-fit with cv_folds=K",
                         field=setting)
    return transductive
