"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, TEI, llama.cpp's servers).

Same contract as the local :class:`~hyperrag.embedding.encoder.TextEncoder`: every text is embedded once per
model, ever (the sqlite :class:`~hyperrag.embedding.cache.EmbeddingCache`, keyed by the embedder's identity),
misses go out in batches of ``batch_size`` texts, several batches in flight at once, through the LLM layer's
client (:class:`~hyperrag.llm.client.ChatClient`: timeouts, retries with backoff on timeouts, connection errors,
429 and 5xx, never on other 4xx). A request that still fails stops the job with one line naming the endpoint
(:class:`EmbeddingEndpointError`, exit code 2 from the entry points).

The identity (``model_key``) names the endpoint, the model and the settings that change the vectors
(``dimensions``, ``normalize``, ``token_pooling``); an index records it, and retrieval over an index embedded
with another identity stops (:meth:`hyperrag.retrievers.base.Retriever.open_index_dir`).

Servers that return one vector per token (llama-cpp-python's server for a model without a pooling type, such as
a chat GGUF) are pooled here (``token_pooling``: mean or last token) before normalising.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from hyperrag.config.validation import PositiveInt
from hyperrag.embedding.cache import EmbeddingCache
from hyperrag.errors import InputError
from hyperrag.utils.hashing import text_digest

if TYPE_CHECKING:
    from hyperrag.llm.client import ClientConfig

log = logging.getLogger(__name__)


class EmbeddingEndpointError(InputError):
    """The embeddings endpoint failed for good (unreachable, refused the request, or replied off-protocol)."""


class OpenAICompatibleEmbedder:
    """Encode texts with ``POST {base_url}/embeddings``; unit vectors (``normalize``), cached on disk.

    Args:
        base_url: the endpoint with its ``/v1`` suffix, e.g. ``http://127.0.0.1:8080/v1``.
        model: the model name sent in requests.
        api_key_env: environment variable holding the API key (``None``: no key; the key is never stored).
        dimensions: ask the endpoint for vectors of this width (OpenAI's ``dimensions``; ``None``: its default).
        batch_size: texts per request.
        normalize: L2-normalise, so dot products are cosines.
        token_pooling: how per-token vectors are pooled when the server returns them (``mean`` or ``last``).
        cache_dir: root of the on-disk caches (default ``$HYPERRAG_CACHE`` or ``~/.cache/hyperrag``).
        show_progress: progress bar while embedding misses (over several batches).
        client: transport settings (:class:`~hyperrag.llm.client.ClientConfig` fields: ``concurrency`` requests
            in flight, ``timeout_s``, ``max_retries``, backoff), from ``embedder/openai_compatible.yaml``.
    """

    def __init__(self, base_url: str, model: str, *, api_key_env: str | None = None,
                 dimensions: PositiveInt | None = None, batch_size: PositiveInt = 64, normalize: bool = True,
                 token_pooling: Literal["mean", "last"] = "mean", cache_dir: str | Path | None = None,
                 show_progress: bool = True, client: ClientConfig | Mapping[str, Any]) -> None:
        from hyperrag.embedding.encoder import default_cache_dir
        from hyperrag.llm.client import ClientConfig

        self.base_url = base_url.rstrip("/")
        self.model_name = model
        self.api_key_env = api_key_env
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.normalize = normalize
        self.token_pooling = token_pooling
        self.show_progress = show_progress
        self.client_config = ClientConfig.from_any(client, "embedder.client")
        tag = f"openai-compatible|{self.base_url}|{model}|dims={dimensions}|norm={normalize}|pool={token_pooling}"
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model.rsplit("/", 1)[-1])[:60]
        self.model_key = f"{safe}-{text_digest(tag, length=10)}"
        root = Path(cache_dir) if cache_dir else default_cache_dir()
        self.cache = EmbeddingCache(root / "embeddings" / f"{self.model_key}.sqlite", dim=dimensions)
        self.encoded_count = 0  # texts actually sent to the endpoint (cache misses)
        self.requests = 0
        self._dim: int | None = dimensions

    def __repr__(self) -> str:
        return f"OpenAICompatibleEmbedder({self.model_name!r} at {self.base_url})"

    def spec(self) -> dict[str, Any]:
        """How to build this embedder again (``hydra.utils.instantiate``-able; no key, no cache folder): what an
        index records so that ``python -m hyperrag.index insert`` embeds new passages the same way."""
        return {"_target_": f"{type(self).__module__}.{type(self).__name__}", "base_url": self.base_url,
                "model": self.model_name, "api_key_env": self.api_key_env, "dimensions": self.dimensions,
                "normalize": self.normalize, "token_pooling": self.token_pooling}

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
            log.info("%s: embedding %d new texts with %s (%d cached)", desc, len(unique), self, len(texts) - len(missing))
            vectors = self._embed(unique, desc)
            self.cache.put_many(unique, vectors)
            self.encoded_count += len(unique)
            lookup = dict(zip(unique, vectors))
            for i in missing:
                found[i] = lookup[texts[i]]
        out = torch.from_numpy(np.stack([found[i] for i in range(len(texts))]))
        self._dim = int(out.shape[1])
        return out

    @property
    def dim(self) -> int:
        """D (asks the endpoint once, for a probe text, when nothing was embedded yet)."""
        if self._dim is None:
            self.encode(["dimension probe"], desc="probe")
        assert self._dim is not None
        return self._dim

    # ---- transport -----------------------------------------------------------------------------------------
    def _body(self, batch: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model_name, "input": batch, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        return body

    def _embed(self, texts: list[str], desc: str) -> np.ndarray:
        """Float32 [len(texts), D] from the endpoint, in order."""
        from hyperrag.llm.client import ChatClient, RequestFailed, run_sync

        batches = [texts[i: i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        bar = None
        if self.show_progress and len(batches) > 1:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc=desc, unit="text")
        api_key = os.environ.get(self.api_key_env) if self.api_key_env else None

        async def go() -> list[Any]:
            async with ChatClient(self.base_url, self.model_name, api_key=api_key, config=self.client_config) as c:
                async def one(batch: list[str]) -> Any:
                    data = await c.post_json("/embeddings", self._body(batch))
                    if bar is not None:
                        bar.update(len(batch))
                    return data

                return list(await asyncio.gather(*(one(b) for b in batches)))

        try:
            replies = run_sync(go)
        except RequestFailed as err:
            raise EmbeddingEndpointError(f"embeddings endpoint {self.base_url}/embeddings (model "
                                         f"{self.model_name!r}) failed after {err.attempts} attempt(s): {err}",
                                         field="embedder") from None
        finally:
            if bar is not None:
                bar.close()
        self.requests += len(batches)
        rows = [row for batch, reply in zip(batches, replies) for row in self._parse(reply, len(batch))]
        return np.stack(rows).astype(np.float32, copy=False)

    def _parse(self, reply: Any, expected: int) -> list[np.ndarray]:
        """One vector per input of a batch, in input order (``data[*].index``), pooled and normalised."""
        try:
            items = sorted(reply["data"], key=lambda d: d.get("index", 0))
            vectors = [np.asarray(d["embedding"], dtype=np.float32) for d in items]
        except (KeyError, TypeError, ValueError) as err:
            raise EmbeddingEndpointError(f"embeddings endpoint {self.base_url} replied off-protocol ({err!r}): "
                                         f"{str(reply)[:200]}", field="embedder") from None
        if len(vectors) != expected:
            raise EmbeddingEndpointError(f"embeddings endpoint {self.base_url} returned {len(vectors)} vectors for "
                                         f"{expected} inputs", field="embedder")
        out = []
        for v in vectors:
            if v.ndim == 2:  # one vector per token: pool them
                v = v.mean(axis=0) if self.token_pooling == "mean" else v[-1]
            if self.normalize:
                v = v / max(float(np.linalg.norm(v)), 1e-12)
            out.append(v)
        return out


__all__ = ["EmbeddingEndpointError", "OpenAICompatibleEmbedder"]
