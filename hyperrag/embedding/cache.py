"""On-disk embedding cache: one sqlite file per model, rows keyed by the SHA-1 of the text."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

_CHUNK = 500  # sqlite's default limit on bound parameters is 999


def text_key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


class EmbeddingCache:
    """Persistent map text → float32 vector for one model.

    Args:
        path: sqlite file; created with its folder when missing.
        dim: vector width; checked on every read.
    """

    def __init__(self, path: str | Path, dim: int | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key BLOB PRIMARY KEY, v BLOB NOT NULL)")
        self.dim = dim

    def get_many(self, texts: Sequence[str]) -> dict[int, np.ndarray]:
        """Return ``{position in texts: vector}`` for the texts already cached."""
        keys = [text_key(t) for t in texts]
        where: dict[bytes, list[int]] = {}
        for i, k in enumerate(keys):
            where.setdefault(k, []).append(i)
        found: dict[int, np.ndarray] = {}
        unique = list(where)
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", chunk):
                vec = np.frombuffer(blob, dtype=np.float32)
                if self.dim is not None and vec.shape[0] != self.dim:
                    continue  # written by another model revision: treat as a miss
                for i in where[key]:
                    found[i] = vec
        return found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [(text_key(t), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for t, v in zip(texts, vectors)]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vec (key, v) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vec").fetchone()[0]

    def close(self) -> None:
        self._db.close()
