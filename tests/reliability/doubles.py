"""TEST DOUBLES shared by the reliability tests: a fast deterministic encoder."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import torch


class HashEncoder:
    """TEST DOUBLE for :class:`~hyperrag.embedding.encoder.TextEncoder`: character-trigram hashing, unit vectors.

    Similar strings get similar vectors (so synonym edges appear); ``encoded_count`` counts texts seen.
    """

    model_key = "hash-trigram-64"
    model_name = "hash-trigram-64"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.encoded_count = 0

    def vector(self, text: str) -> torch.Tensor:
        v = torch.zeros(self.dim)
        padded = f"  {text.lower()}  "
        for i in range(len(padded) - 2):
            h = int.from_bytes(hashlib.blake2b(padded[i:i + 3].encode(), digest_size=4).digest(), "little")
            v[h % self.dim] += 1.0
        return v / v.norm().clamp_min(1e-9)

    def encode(self, texts: Sequence[str], desc: str = "encode") -> torch.Tensor:
        texts = list(texts)
        if not texts:
            raise ValueError("encode() needs at least one text")
        self.encoded_count += len(texts)
        return torch.stack([self.vector(t) for t in texts])
