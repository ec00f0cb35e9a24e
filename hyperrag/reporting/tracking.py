"""Run logging (Hydra group ``tracking/``): W&B and a local CSV, plus the always-written ``run_info.json``.

    tracker = instantiate(cfg.tracking)     # RunTracker
    tracker.start(cfg)                       # run_info.json (seeds, versions, git commit) in cfg.out
    ...                                      # the run writes predictions.jsonl / metrics.json
    tracker.finish(metrics)                  # W&B run (config, summary, recall@k curve, artefacts) + CSV row

W&B is offline unless ``WANDB_API_KEY`` is set (``mode: auto``); offline runs land in
``<dir>/wandb/offline-run-*`` (``wandb sync`` them later). In a Hydra multirun every job's W&B run joins one
group — the sweep's name (experiment + launch time) — and is named by its own overrides; the CSV row goes
to the sweep directory's ``runs.csv``. Logging never fails a finished run: errors are logged and skipped.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hyperrag.reporting.csv_log import append_row, flatten
from hyperrag.reporting.run_info import plain_config, update_run_info, write_run_info

log = logging.getLogger(__name__)

# task overrides that say how a job was launched, not what it computed (left out of run names)
_NAME_SKIP = re.compile(r"^(\+*)(experiment|tracking|out|cache_dir|hydra)([.=]|$)")


def wandb_mode(mode: str | None) -> str:
    """``auto`` → ``$WANDB_MODE`` if set, else online with ``WANDB_API_KEY``, else offline."""
    if mode and mode != "auto":
        return mode
    return os.environ.get("WANDB_MODE") or ("online" if os.environ.get("WANDB_API_KEY") else "offline")


def swept_keys(sweep_dir: str | Path, sweeper_params: Mapping[str, Any]) -> set[str]:
    """Keys a multirun varies: the sweeper's ``params`` plus the sweep overrides it was launched with
    (``a=1,2``, ``range(...)``, ``glob(...)``), read from Hydra's ``<sweep dir>/multirun.yaml``."""
    keys = {str(k) for k in sweeper_params}
    try:
        from hydra.core.override_parser.overrides_parser import OverridesParser
        from omegaconf import OmegaConf

        launched = OmegaConf.load(Path(sweep_dir) / "multirun.yaml").hydra.overrides.task
        keys |= {o.key_or_group for o in OverridesParser.create().parse_overrides(list(launched))
                 if o.is_sweep_override()}
    except Exception as err:  # noqa: BLE001 - naming only
        log.debug("sweep overrides not readable from %s: %s", sweep_dir, err)
    return keys


def _hydra_job() -> dict[str, Any] | None:
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        if not HydraConfig.initialized():
            return None
        hc = HydraConfig.get()
        # a launcher-run job has a number (hydra.mode is unset when Hydra.multirun is called directly)
        multirun = hc.mode == RunMode.MULTIRUN or (hc.mode is None and hc.job.get("num") is not None)
        return {"multirun": multirun, "sweep_dir": str(hc.sweep.dir),
                "overrides": list(hc.overrides.task), "experiment": hc.runtime.choices.get("experiment"),
                "num": hc.job.get("num"),
                "swept": swept_keys(hc.sweep.dir, hc.sweeper.get("params") or {}) if multirun else set()}
    except Exception as err:  # noqa: BLE001 - naming only
        log.debug("no Hydra job info: %s", err)
        return None


class RunTracker:
    """Logs one run to the configured backends.

    Args:
        backends: any of ``wandb``, ``csv`` (``[]``: only ``run_info.json``).
        project / entity / tags / job_type: W&B run fields.
        group: W&B group; ``None`` = the sweep name in a multirun (``<experiment>_<launch time>``), else none.
        name: W&B run name; ``None`` = in a multirun ``<job num>:<swept overrides>`` (e.g.
            ``2:method.retriever.damping=0.7``), else ``<method>-<data>``.
        mode: ``auto`` | ``offline`` | ``online`` | ``disabled``.
        dir: where ``wandb/`` goes; ``None`` = the sweep directory in a multirun, else the run directory.
        csv: the CSV file; ``None`` = ``runs.csv`` in the sweep directory in a multirun, else beside the run
            directory.
        artifacts: files of the run directory logged as one W&B artifact (missing ones are skipped).
    """

    def __init__(self, backends: Sequence[str] = ("wandb", "csv"), project: str = "hyperrag",
                 entity: str | None = None, group: str | None = None, name: str | None = None,
                 tags: Sequence[str] = (), job_type: str = "retrieve", mode: str = "auto", dir: str | None = None,
                 csv: str | None = None, artifacts: Sequence[str] = ()) -> None:
        unknown = set(backends) - {"wandb", "csv"}
        if unknown:
            raise ValueError(f"tracking.backends: unknown {sorted(unknown)}; use wandb, csv")
        self.backends = list(backends)
        self.project, self.entity, self.group, self.name = project, entity, group, name
        self.tags, self.job_type, self.mode, self.dir = list(tags), job_type, mode, dir
        self.csv, self.artifacts = csv, list(artifacts)
        self.cfg: Any = None
        self.out: Path | None = None
        self.t0 = 0.0

    # ------------------------------------------------------------------ naming
    def run_group(self) -> str | None:
        if self.group:
            return self.group
        job = _hydra_job()
        if job and job["multirun"]:
            sweep = Path(job["sweep_dir"])
            return f"{job['experiment'] or sweep.parent.name}_{sweep.name}"
        return None

    def run_name(self) -> str:
        if self.name:
            return self.name
        job = _hydra_job()
        cfg = self.cfg
        base = f"{cfg.method.name}-{cfg.data.name}" if cfg is not None and "method" in cfg and "data" in cfg else "run"
        if job and job["multirun"]:  # the swept settings tell the group's runs apart
            kept = [o for o in job["overrides"] if not _NAME_SKIP.match(o)]
            swept = [o for o in kept if o.split("=", 1)[0].lstrip("+~") in job["swept"]]
            return f"{job['num']}:{','.join(swept or kept) or base}"[:120]
        return base

    def csv_path(self) -> Path:
        if self.csv:
            return Path(self.csv)
        job = _hydra_job()
        return Path(job["sweep_dir"]) / "runs.csv" if job and job["multirun"] else (self.out or Path(".")).parent / "runs.csv"

    def wandb_dir(self) -> Path:
        if self.dir:
            return Path(self.dir)
        job = _hydra_job()
        return Path(job["sweep_dir"]) if job and job["multirun"] else (self.out or Path("."))

    # ------------------------------------------------------------------ lifecycle
    def start(self, cfg: Any) -> RunTracker:
        """Record the run's reproducibility info before it computes anything."""
        self.cfg, self.out, self.t0 = cfg, Path(cfg.out), time.perf_counter()
        write_run_info(cfg, self.out, tracking={"backends": self.backends, "group": self.run_group(),
                                                "name": self.run_name()})
        return self

    def finish(self, metrics: Mapping[str, Any], status: str = "finished") -> dict[str, Any]:
        """Log the finished run; returns where it went (``{"csv": path, "wandb": run dir}``)."""
        if self.out is None:
            raise RuntimeError("RunTracker.finish() before start()")
        where: dict[str, Any] = {}
        wall = round(time.perf_counter() - self.t0, 3)
        update_run_info(self.out, finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"), wall_seconds=wall,
                        status=status)
        for backend in self.backends:
            try:
                where[backend] = getattr(self, f"_log_{backend}")(dict(metrics))
            except Exception as err:  # noqa: BLE001 - the run's results are on disk already
                log.warning("tracking: %s logging failed: %s", backend, err)
        if where:
            update_run_info(self.out, logged_to={k: str(v) for k, v in where.items()})
        return where

    # ------------------------------------------------------------------ backends
    def _log_csv(self, metrics: dict[str, Any]) -> Path:
        config = {k: v for k, v in flatten(plain_config(self.cfg)).items() if not k.startswith("hydra.")}
        row = {"run_dir": str(self.out), "finished_at": time.strftime("%Y-%m-%d %H:%M:%S"),
               "group": self.run_group() or "", "name": self.run_name(), "git_commit": _commit(self.out),
               **{k: v for k, v in metrics.items() if not isinstance(v, (dict, list))},
               **{f"cfg.{k}": v for k, v in config.items()}}
        return append_row(self.csv_path(), row)

    def _log_wandb(self, metrics: dict[str, Any]) -> str:
        import wandb

        wdir = self.wandb_dir()
        wdir.mkdir(parents=True, exist_ok=True)
        config = plain_config(self.cfg)
        config.pop("hydra", None)
        run = wandb.init(project=self.project, entity=self.entity, group=self.run_group(), name=self.run_name(),
                         job_type=self.job_type, tags=self.tags or None, dir=str(wdir), mode=wandb_mode(self.mode),
                         config={**config, "run_dir": str(self.out)},
                         settings=wandb.Settings(silent=True, console="off"))
        try:
            scalars = {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            run.log(scalars)
            run.summary.update(scalars)
            curve = sorted((int(k.split("@")[1]), v) for k, v in scalars.items() if k.startswith("recall@"))
            if curve:
                table = wandb.Table(data=[[k, v] for k, v in curve], columns=["k", "recall"])
                run.log({"recall_at_k": wandb.plot.line(table, "k", "recall", title="recall@k")})
            files = [self.out / a for a in self.artifacts if (self.out / a).is_file()]
            if files:
                art = wandb.Artifact(re.sub(r"[^A-Za-z0-9_.-]+", "-", f"run-{run.id}")[:120], type="retrieval-run",
                                     metadata={"run_dir": str(self.out)})
                for f in files:
                    art.add_file(str(f), name=f.name if f.parent == self.out else str(f.relative_to(self.out)))
                run.log_artifact(art)
            run_dir = Path(run.dir).parent if run.dir else wdir
        finally:
            run.finish()
        log.info("W&B run %s (%s, group %s) in %s", run.name, wandb_mode(self.mode), self.run_group(), run_dir)
        return str(run_dir)


def _commit(out: Path) -> str:
    try:
        return (json.loads((out / "run_info.json").read_text()).get("git") or {}).get("commit", "")
    except (OSError, ValueError):
        return ""


class NoTracker(RunTracker):
    """Configs without a ``tracking`` node: only ``run_info.json``."""

    def __init__(self) -> None:
        super().__init__(backends=())


def build_tracker(cfg: Any) -> RunTracker:
    """The run's tracker from ``cfg.tracking`` (a Hydra node with ``_target_``), started on ``cfg``."""
    node = cfg.get("tracking") if hasattr(cfg, "get") else None
    if node:
        from hydra.utils import instantiate

        tracker = instantiate(node, _convert_="all")
    else:
        tracker = NoTracker()
    return tracker.start(cfg)
