"""Content digests for cache, index and model keys: one algorithm (SHA-256), one way to hash each kind of
thing.

* :func:`stable_digest` — any mix of tensors (dtype, shape and bytes) and JSON-serialisable values (sorted
  keys, ``str`` fallback): settings, edge lists, the parts of a model key;
* :func:`text_digest` — one string as given (a canonical request blob, a payload a caller serialised itself);
* :func:`passage_digest` — a passage (id, title, text): what the KG index, HyperRAG's saved balls and
  CDF-RAG's causal records key a passage on;
* :func:`file_digest` — a file's bytes (index manifests);
* :class:`Hasher` — the same, fed piece by piece (a corpus streamed passage by passage).

The same inputs give the same key across runs, processes and machines. Keys written before this module used
SHA-1 in some places (model keys, module-summary and gate checkpoints, OpenIE checkpoints, the YAKE keyword
cache, HyperRAG's saved-ball fingerprints, the embedding cache); those stages are recomputed once under the
new keys — the LLM's answers come from its response cache (whose keys did not change) and the embeddings are
carried over from the old cache file (:meth:`~hyperrag.embedding.cache.EmbeddingCache.get_many`), so results
do not change. :func:`legacy_sha1` exists only for that carrying over.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

ALGORITHM = "sha256"


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, default=str).encode("utf-8", "surrogatepass")


class Hasher:
    """An incremental SHA-256 digest: ``update`` with text, bytes, tensors or JSON-serialisable values."""

    def __init__(self) -> None:
        self._h = hashlib.new(ALGORITHM)

    def update(self, part: Any) -> Hasher:
        """Add ``part``: ``bytes`` as is, ``str`` as UTF-8, a tensor as its dtype, shape and bytes,
        anything else as sorted-key JSON."""
        if isinstance(part, bytes):
            self._h.update(part)
        elif isinstance(part, str):
            self._h.update(part.encode("utf-8", "surrogatepass"))
        elif hasattr(part, "detach") and hasattr(part, "numpy"):  # a torch.Tensor (torch not imported)
            self._h.update(str((part.dtype, tuple(part.shape))).encode())
            self._h.update(part.detach().cpu().contiguous().numpy().tobytes())
        else:
            self._h.update(_json(part))
        return self

    def hexdigest(self, length: int | None = None) -> str:
        """The hex digest, cut to its first ``length`` characters when given."""
        return self._h.hexdigest()[:length]


def stable_digest(*parts: Any, length: int | None = None) -> str:
    """Hex digest of ``parts``: tensors by dtype, shape and bytes, anything else as sorted-key JSON (``str``
    fallback).

    Args:
        parts: the values the key depends on, in a fixed order.
        length: keep the first ``length`` hex characters (``None``: all 64).
    """
    h = Hasher()
    for part in parts:
        h.update(part if hasattr(part, "detach") else _json(part))
    return h.hexdigest(length)


def text_digest(text: str, length: int | None = None) -> str:
    """Hex digest of one string's UTF-8 bytes (a caller's own canonical serialisation)."""
    return Hasher().update(text).hexdigest(length)


def passage_digest(passage: Any, length: int | None = None) -> str:
    """Hex digest of a passage's id, title and text (a :class:`~hyperrag.data.types.Passage` or a mapping)."""
    get = passage.get if isinstance(passage, dict) else lambda k, d="": getattr(passage, k, d)
    fields = [str(get("id", "")), str(get("title", "") or ""), str(get("text", ""))]
    return stable_digest(fields, length=length)


def file_digest(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex digest of a file's bytes, read in ``chunk``-byte pieces."""
    h = hashlib.new(ALGORITHM)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def legacy_sha1(text: str) -> bytes:
    """The SHA-1 digest caches written before this module keyed on (read once to carry their entries over)."""
    return hashlib.sha1(text.encode("utf-8")).digest()


__all__ = ["ALGORITHM", "Hasher", "file_digest", "legacy_sha1", "passage_digest", "stable_digest",
           "text_digest"]
