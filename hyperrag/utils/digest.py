"""Stable content digests for cache and checkpoint keys."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def stable_digest(*parts: Any) -> str:
    """SHA-1 hex digest of ``parts``: tensors by their bytes, anything else as sorted-key JSON (``str`` fallback).

    The same inputs give the same key across runs and machines, so a model or artefact keyed by it is reused.
    """
    h = hashlib.sha1()
    for part in parts:
        if hasattr(part, "detach") and hasattr(part, "numpy"):  # a torch.Tensor, without importing torch here
            h.update(part.detach().cpu().contiguous().numpy().tobytes())
        else:
            h.update(json.dumps(part, sort_keys=True, default=str).encode())
    return h.hexdigest()
