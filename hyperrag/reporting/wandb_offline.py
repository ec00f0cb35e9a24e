"""Read W&B offline runs (``wandb/offline-run-*/run-*.wandb``) without syncing: group, name, config, summary.

The ``.wandb`` file is W&B's transaction log — a LevelDB-style log of 32 KiB blocks, each record framed by
a 7-byte header (CRC32, length, type: full/first/middle/last) and holding one ``wandb_internal_pb2.Record``.
Used by the tests and by ``report.py`` to show which runs a sweep put in which group.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_BLOCK = 32768
_HEADER = 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def _records(data: bytes) -> Iterator[bytes]:
    if data[:4] != b":W&B":
        raise ValueError("not a W&B transaction log")
    pos, buf = 7, b""
    while pos + _HEADER <= len(data):
        left = _BLOCK - pos % _BLOCK
        if left < _HEADER:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + _HEADER])
        pos += _HEADER
        if kind == 0 and length == 0:  # block padding
            pos += left - _HEADER
            continue
        if pos + length > len(data):  # a record still being written
            return
        chunk = data[pos:pos + length]
        pos += length
        if kind == _FULL:
            yield chunk
        elif kind == _FIRST:
            buf = chunk
        elif kind == _MIDDLE:
            buf += chunk
        elif kind == _LAST:
            yield buf + chunk
            buf = b""


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def read_offline_run(run_dir: str | Path, wait_s: float = 15.0) -> dict[str, Any]:
    """``{"id", "group", "name", "project", "job_type", "config", "summary", "artifacts", "finished", "path"}``
    of one ``offline-run-*`` directory.

    W&B's service process writes the log asynchronously: right after ``run.finish()`` the file may still be
    incomplete, so this waits up to ``wait_s`` seconds for the run's exit record.
    """
    run_dir = Path(run_dir)
    deadline = time.monotonic() + wait_s
    while True:
        files = sorted(run_dir.glob("*.wandb"))
        if files:
            out = _parse(files[0].read_bytes(), run_dir)
            if out["finished"]:
                return out
        if time.monotonic() >= deadline:
            if not files:
                raise FileNotFoundError(f"no .wandb file in {run_dir}")
            return out
        time.sleep(0.2)


def _parse(data: bytes, run_dir: Path) -> dict[str, Any]:
    from wandb.proto import wandb_internal_pb2 as pb

    out: dict[str, Any] = {"path": str(run_dir), "config": {}, "summary": {}, "artifacts": [], "finished": False}
    for raw in _records(data):
        rec = pb.Record()
        rec.ParseFromString(raw)
        kind = rec.WhichOneof("record_type")
        if kind == "run":
            r = rec.run
            out.update(id=r.run_id, group=r.run_group, name=r.display_name, project=r.project, job_type=r.job_type)
            out["config"].update({i.key: _loads(i.value_json) for i in r.config.update})
        elif kind == "config":
            out["config"].update({i.key: _loads(i.value_json) for i in rec.config.update})
        elif kind == "summary":
            out["summary"].update({i.key or "/".join(i.nested_key): _loads(i.value_json) for i in rec.summary.update})
        elif kind == "artifact":
            out["artifacts"].append({"name": rec.artifact.name, "type": rec.artifact.type,
                                     "files": [m.path for m in rec.artifact.manifest.contents]})
        elif kind == "exit":
            out["finished"] = True
    out["config"].pop("_wandb", None)
    return out


def read_offline_runs(root: str | Path, wait_s: float = 15.0) -> list[dict[str, Any]]:
    """Every offline run under ``root`` (searched recursively), oldest first."""
    return [read_offline_run(p, wait_s) for p in sorted(Path(root).rglob("offline-run-*")) if p.is_dir()]
