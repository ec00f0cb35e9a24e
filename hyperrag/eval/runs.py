"""Finding and reading finished runs: prediction files, the config a run was composed with, its dataset.

A run directory (written by ``retrieve.py``) holds ``predictions.jsonl``, ``metrics.json``,
``run_info.json`` (resolved config, seeds, versions, git commit) and, when Hydra launched it,
``.hydra/config.yaml`` + ``overrides.yaml``.
"""

from __future__ import annotations

import glob
import json
import logging
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError

log = logging.getLogger(__name__)

PREDICTIONS = "predictions.jsonl"


def read_json_file(path: Path) -> Any:
    """A run file's JSON (``metrics.json``, ``run_info.json``, ``evaluation.json``); an unreadable or invalid one
    raises :class:`InputError` naming it (and the line)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise InputError(f"not valid JSON: {err.msg} (column {err.colno})", path=path, line=err.lineno) from None
    except (OSError, ValueError) as err:  # unreadable, not UTF-8
        raise InputError(f"cannot read this run file ({type(err).__name__})", path=path) from None


def read_jsonl_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a run's ``.jsonl`` file, one per non-blank line; a line that is not a JSON object
    raises :class:`InputError` naming the file and the line."""
    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read this run file ({type(err).__name__})", path=path) from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"not valid JSON: {err.msg} (column {err.colno})", path=path, line=n) from None
        if not isinstance(row, dict):
            raise InputError(f"expected a JSON object, got {type(row).__name__}", path=path, line=n)
        rows.append(row)
    return rows


def find_prediction_files(spec: str | Path | list[Any] | tuple[Any, ...]) -> list[Path]:
    """Prediction files from a file, a run directory (searched recursively), a glob, or a list of those."""
    if isinstance(spec, (list, tuple)) or type(spec).__name__ == "ListConfig":
        return sorted({p for s in spec for p in find_prediction_files(str(s))})
    text = str(spec)
    paths = [Path(p) for p in sorted(glob.glob(text, recursive=True))] if glob.has_magic(text) else [Path(text)]
    found: set[Path] = set()
    for p in paths:
        if p.is_dir():
            found.update(p.rglob(PREDICTIONS))
        elif p.is_file():
            found.add(p)
    if not found:
        raise InputError(f"no {PREDICTIONS} found", path=text)
    return sorted(found)


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    from hyperrag.data.jsonl import iter_jsonl

    rows = []
    for line, obj in iter_jsonl(path):
        for key in ("id", "question", "ranked_ids"):
            if key not in obj:
                raise InputError("missing required field", path=path, line=line, field=key)
        rows.append(obj)
    if not rows:
        raise InputError("no predictions", path=path)
    return rows


def run_config(run_dir: str | Path) -> Any:
    """The config a run was composed with (OmegaConf): ``run_info.json``'s resolved copy, else
    ``.hydra/config.yaml``; ``None`` when neither exists."""
    from omegaconf import OmegaConf

    run_dir = Path(run_dir)
    info = run_dir / "run_info.json"
    if info.is_file():
        cfg = json.loads(info.read_text()).get("config")
        if cfg:
            return OmegaConf.create(cfg)
    hydra_cfg = run_dir / ".hydra" / "config.yaml"
    if hydra_cfg.is_file():
        return OmegaConf.load(hydra_cfg)
    return None


def load_dataset(data_cfg: Any) -> Any:
    """Instantiate a ``data`` config node (paths relative to the working directory) → Dataset."""
    from hydra.utils import instantiate

    return instantiate(data_cfg)


def read_query_records(path: str | Path) -> dict[str, dict[str, Any]]:
    """Raw query records by id from a JSONL or JSON-list query file (keeps fields the readers drop, such as
    ``gold_sentences`` and ``causal_pairs``)."""
    path = Path(path)
    if path.suffix == ".json":
        from hyperrag.data.musique import load_json

        records = load_json(path)
        records = records if isinstance(records, list) else []
    else:
        from hyperrag.data.jsonl import iter_jsonl

        records = [obj for _, obj in iter_jsonl(path)]
    return {str(r["id"]): r for r in records if isinstance(r, dict) and "id" in r}


def join_gold_fields(rows: list[dict[str, Any]], records: dict[str, dict[str, Any]],
                     fields: tuple[str, ...]) -> int:
    """Copy ``fields`` from the query records into the rows (matched by id) where a row lacks them.
    Returns how many rows received at least one field."""
    joined = 0
    for row in rows:
        rec = records.get(str(row["id"]))
        if rec is None:
            continue
        added = False
        for f in fields:
            if f in rec and f not in row:
                row[f] = rec[f]
                added = True
        joined += added
    return joined


def queries_file_of(data_cfg: Any) -> str | None:
    """The query file a ``data`` node reads, when it names one (``data=jsonl``)."""
    if data_cfg is None:
        return None
    q = data_cfg.get("queries") if hasattr(data_cfg, "get") else None
    if q and Path(str(q)).is_file():
        return str(q)
    d = data_cfg.get("dir") if hasattr(data_cfg, "get") else None
    if d and (Path(str(d)) / "queries.json").is_file():
        return str(Path(str(d)) / "queries.json")
    return None
