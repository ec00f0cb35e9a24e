"""One CSV row per run (config keys + metrics), appended under a file lock.

Runs of different methods have different config keys: when a row brings new columns, the file is rewritten
once with the union of the columns (old rows get empty cells), so the CSV always has one header.
"""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` itself (POSIX ``flock``; no lock where unavailable)."""
    path.touch(exist_ok=True)
    with path.open("r") as handle:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def flatten(node: Any, prefix: str = "", sep: str = ".") -> dict[str, Any]:
    """Nested dicts → ``{"a.b.c": value}``; lists become JSON strings."""
    out: dict[str, Any] = {}
    if isinstance(node, Mapping):
        for k, v in node.items():
            out.update(flatten(v, f"{prefix}{sep}{k}" if prefix else str(k), sep))
    elif isinstance(node, (list, tuple)):
        out[prefix] = json.dumps(node, default=str)
    else:
        out[prefix] = node
    return out


def append_row(path: str | Path, row: Mapping[str, Any]) -> Path:
    """Append ``row`` to the CSV at ``path`` (created with a header if missing); safe across processes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        header: list[str] = []
        rows: list[dict[str, Any]] = []
        if path.is_file() and path.stat().st_size:
            with path.open(newline="") as handle:
                reader = csv.DictReader(handle)
                header = list(reader.fieldnames or [])
                new = [k for k in row if k not in header]
                if new:
                    rows = list(reader)
        else:
            new = list(row)
        if not header or new:
            header = header + [k for k in row if k not in header]
            with path.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=header)
                writer.writeheader()
                writer.writerows(rows)
                writer.writerow(dict(row))
        else:
            with path.open("a", newline="") as handle:
                csv.DictWriter(handle, fieldnames=header).writerow(dict(row))
    return path


def read_rows(path: str | Path) -> list[dict[str, str]]:
    with Path(path).open(newline="") as handle:
        return list(csv.DictReader(handle))
