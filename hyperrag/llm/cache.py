"""Persistent sqlite response cache.

A key is the SHA-256 of everything that determines a reply: model, messages, sampling settings,
the constrained-decoding payload, the task name, its ``SCHEMA_VERSION`` and a hash of its schema.
Only replies that parsed and validated are stored (the raw text; it is parsed again on a hit, which
is cheap and keeps ID mapping in the caller's terms), so failed or invalid outputs are retried on the
next run, and a rerun of a finished job sends zero requests.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperrag.utils.hashing import text_digest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    model TEXT NOT NULL,
    raw TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(
    *, model: str, messages: list[dict[str, str]], sampling: dict[str, Any], structured: dict[str, Any], task: str
) -> str:
    """Stable key for one task request (canonical JSON, SHA-256)."""
    payload = {"model": model, "messages": messages, "sampling": sampling, "structured": structured, "task": task}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return text_digest(blob)


@dataclass
class CachedReply:
    raw: str
    prompt_tokens: int
    completion_tokens: int


class ResponseCache:
    """``get``/``put`` of validated raw replies in an sqlite file (WAL mode, safe across threads).

    Args:
        path: the sqlite file (parent folders are created); ``":memory:"`` for a throwaway cache.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.commit()

    def get(self, key: str) -> CachedReply | None:
        with self._lock:
            row = self._db.execute(
                "SELECT raw, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return CachedReply(*row) if row else None

    def contains(self, key: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def put(self, key: str, *, task: str, model: str, raw: str, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, task, model, raw, int(prompt_tokens), int(completion_tokens), time.time()),
            )
            self._db.commit()

    def delete(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM responses WHERE key = ?", (key,))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def stats(self) -> dict[str, int]:
        """Entries per task."""
        with self._lock:
            rows = self._db.execute("SELECT task, COUNT(*) FROM responses GROUP BY task").fetchall()
        return {t: int(n) for t, n in rows}

    def close(self) -> None:
        with self._lock:
            self._db.close()
