"""Crash-safe file writes: whole artifacts via temp file + ``os.replace``; logs via durable appends.

A reader never sees half an artifact: it is written to a temp file in the same folder, flushed,
fsynced and renamed over the target in one step (atomic on POSIX and Windows). Append-only logs
(checkpoints, ``predictions.jsonl``) are written line by line with flush + fsync; a process killed
mid-line leaves a torn last line, which :func:`read_jsonl_log` drops (and cuts off, so the next
append starts on a fresh line).

    atomic_write_json(out / "metrics.json", metrics)
    with atomic_path(out / "graph.pt") as tmp:
        torch.save(tensors, tmp)
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


def _fsync_dir(folder: Path) -> None:
    """Make a rename durable (best effort: not every platform can open a directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temp path next to ``path``; on success it is fsynced and renamed onto ``path``.

    On an exception the temp file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 1) -> None:
    atomic_write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False, default=str))


def atomic_write_jsonl(path: str | Path, rows: Iterable[Any]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def append_durably(handle: IO[str], lines: Iterable[str]) -> None:
    """Append whole lines to an open text handle, then flush and fsync (a SIGKILL loses at most a torn line)."""
    handle.write("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    handle.flush()
    os.fsync(handle.fileno())


def read_jsonl_log(path: str | Path, *, repair: bool = True) -> list[dict[str, Any]]:
    """Complete JSON-object lines of an append-only log; a torn or unparsable line is skipped.

    Args:
        repair: cut the file back to its last complete line, so later appends start on a fresh line.
    """
    path = Path(path)
    if not path.exists():
        return []
    raw = path.read_bytes()
    end = raw.rfind(b"\n") + 1  # bytes after the last newline are a torn line
    if repair and end != len(raw):
        with open(path, "rb+") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
    rows: list[dict[str, Any]] = []
    for line in raw[:end].split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            rows.append(obj)
    return rows


__all__ = ["append_durably", "atomic_path", "atomic_torch_save", "atomic_write_bytes", "atomic_write_json",
           "atomic_write_jsonl", "atomic_write_text", "read_jsonl_log"]
