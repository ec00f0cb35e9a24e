"""On-disk embedding cache: one sqlite file per model, rows keyed by the SHA-256 of the text.

Caches written before the keys moved to SHA-256 (one per model, keyed by SHA-1, under the model's old file name) are
read as a fallback: a text found only there is copied into the new cache, so nothing is encoded again and every
vector stays the one computed before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hyperrag.utils.hashing import legacy_sha1, text_digest

_CHUNK = 500  # sqlite's default limit on bound parameters is 999


def text_key(text: str) -> bytes:
    return bytes.fromhex(text_digest(text))


class EmbeddingCache:
    """Persistent map text → float32 vector for one model.

    Args:
        path: sqlite file; created with its folder when missing.
        dim: vector width; checked on every read.
        legacy_path: the model's cache from before the SHA-256 keys (read only, when it exists).
    """

    def __init__(self, path: str | Path, dim: int | None = None, legacy_path: str | Path | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key BLOB PRIMARY KEY, v BLOB NOT NULL)")
        self.dim = dim
        legacy = Path(legacy_path) if legacy_path else None
        self._legacy = sqlite3.connect(f"file:{legacy}?mode=ro", uri=True) if legacy and legacy.is_file() else None

    def _lookup(self, db: sqlite3.Connection, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """``{key: vector}`` for the keys ``db`` holds (with the expected width)."""
        out: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, blob in db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", chunk):
                vec = np.frombuffer(blob, dtype=np.float32)
                if self.dim is None or vec.shape[0] == self.dim:  # else written by another model revision: a miss
                    out[key] = vec
        return out

    def get_many(self, texts: Sequence[str]) -> dict[int, np.ndarray]:
        """Return ``{position in texts: vector}`` for the texts already cached (here or in the legacy cache)."""
        keys = [text_key(t) for t in texts]
        hits = self._lookup(self._db, keys)
        found = {i: hits[k] for i, k in enumerate(keys) if k in hits}
        if self._legacy is not None and len(found) < len(texts):
            missing = [i for i in range(len(texts)) if i not in found]
            old = self._lookup(self._legacy, [legacy_sha1(texts[i]) for i in missing])
            carried = [i for i in missing if legacy_sha1(texts[i]) in old]
            for i in carried:
                found[i] = old[legacy_sha1(texts[i])]
            if carried:  # carried over once: the next read finds them under the new keys
                self.put_many([texts[i] for i in carried], np.stack([found[i] for i in carried]))
        return found

    def put_many(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        self.put_rows([text_key(t) for t in texts], vectors)

    def rows(self) -> tuple[list[bytes], np.ndarray]:
        """Every cached row: (keys — SHA-256 of the texts —, vectors [N, D] float32), in key order; for carrying a
        cache to another machine (``benchmarks/gpu_check.py``)."""
        keys, vectors = [], []
        for key, blob in self._db.execute("SELECT key, v FROM vec ORDER BY key"):
            keys.append(bytes(key))
            vectors.append(np.frombuffer(blob, dtype=np.float32))
        return keys, np.stack(vectors) if vectors else np.zeros((0, self.dim or 0), dtype=np.float32)

    def put_rows(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store rows by key (the SHA-256 of their texts, as :meth:`rows` gives them)."""
        rows = [(bytes(k), np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in zip(keys, vectors)]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vec (key, v) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vec").fetchone()[0]

    def close(self) -> None:
        self._db.close()
        if self._legacy is not None:
            self._legacy.close()
