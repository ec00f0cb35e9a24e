"""Append-only JSONL checkpoints for offline LLM stages (module summaries, causal gates).

Each finished unit of work is one line written with a single ``write`` + flush + fsync, so a killed run
leaves at worst a torn last line, which :meth:`JsonlCheckpoint.load` skips. Records carry a ``digest`` of
the inputs they were computed from; a record whose digest no longer matches (the module's text changed) is
ignored and recomputed. A rerun therefore only does the missing units.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Self


class JsonlCheckpoint:
    """Records keyed by a string ``key`` field, persisted one line each.

    Args:
        path: the JSONL file (created with its folder on first write).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fh: Any = None

    def load(self) -> dict[str, dict[str, Any]]:
        """``key → record`` for every complete line (the last record of a key wins)."""
        done: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return done
        with open(self.path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                    done[str(rec["key"])] = rec
                except (ValueError, KeyError, TypeError):
                    continue  # torn line of a killed run
        return done

    def by_digest(self) -> dict[str, dict[str, Any]]:
        """``digest → record`` over every complete line (content-addressed: survives renumbered keys)."""
        out: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return out
        with open(self.path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                    out[str(rec["digest"])] = rec
                except (ValueError, KeyError, TypeError):
                    continue
        return out

    def append(self, record: dict[str, Any]) -> None:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
