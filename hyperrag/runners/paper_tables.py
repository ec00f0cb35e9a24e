"""Paper-table runs over ``paper_data``: which of a table's datasets are present, one line per missing one, and
exit code 2 when none is.

A table experiment (``experiment=catrag_table``) sweeps ``data.name`` over its paper's datasets with
``data=paper``. Its first job checks every dataset of the sweep: it prints one line per missing dataset (which
files to put where) and stops the whole command with exit code 2 when none is present. A job whose own dataset is
missing is skipped (no run directory, no metrics), so the table holds every dataset that is there.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from hyperrag.data.paper_data import missing_line, present
from hyperrag.errors import InputError

log = logging.getLogger(__name__)

PAPER_TARGET = "hyperrag.data.paper_data.paper_dataset"


def is_paper_data(cfg: Any) -> bool:
    return str(cfg.data.get("_target_", "")) == PAPER_TARGET


def _sweep_names(cfg: Any) -> list[str]:
    """The datasets of this launch: a ``data.name=a,b`` on the command line, else the experiment's sweep."""
    for arg in sys.argv[1:]:
        key, _, value = arg.partition("=")
        if key.lstrip("+") == "data.name" and value:
            return [v.strip() for v in value.split(",") if v.strip()]
    try:
        from hydra.core.hydra_config import HydraConfig

        params = HydraConfig.get().sweeper.get("params") or {}
    except (ValueError, AttributeError):  # not launched by Hydra (tests composing a config)
        params = {}
    value = params.get("data.name")
    if value:
        return [v.strip() for v in str(value).split(",") if v.strip()]
    return [str(cfg.data.name)]


def _job_number() -> int:
    try:
        from hydra.core.hydra_config import HydraConfig

        return int(HydraConfig.get().job.get("num", 0) or 0)
    except (ValueError, AttributeError, TypeError):
        return 0


def check_paper_data(cfg: Any) -> bool:
    """For ``data=paper`` runs: ``True`` when this job's dataset is present and the job runs, ``False`` when it is
    skipped. The first job of a launch prints one line per missing dataset of the table.

    Raises:
        InputError: ``paper_data`` unset, or none of the launch's datasets present (exit code 2).
    """
    if not is_paper_data(cfg):
        return True
    root = cfg.data.get("dir")
    if root is None:
        raise InputError("set paper_data=DIR: the directory that holds the papers' dataset files "
                         "(docs/reproduce.md lists them)", field="paper_data")
    names = _sweep_names(cfg)
    here = [n for n in names if present(root, n)]
    if _job_number() == 0:
        for n in names:
            if n not in here:
                print(f"missing dataset {missing_line(root, n)}", file=sys.stderr, flush=True)
        if not here:
            raise InputError(f"none of this table's datasets ({', '.join(names)}) is under {root}; the lines above "
                             "say which files to put there", field="paper_data")
    name = str(cfg.data.name)
    if not present(root, name):
        if name not in names:  # a single run (no sweep) of a missing dataset
            raise InputError(missing_line(root, name), field="paper_data")
        log.info("skipped: %s", missing_line(root, name))
        return False
    return True
