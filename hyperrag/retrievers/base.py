"""The retriever interface every method implements: index a dataset once, then retrieve query batches."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

import torch

from hyperrag.data.types import Dataset
from hyperrag.errors import InputError

if TYPE_CHECKING:
    from hyperrag.index.kg_index import KGIndex
    from hyperrag.protocols import Encoder, LanguageModel


class RetrieverArgs(TypedDict, total=False):
    """What every retriever takes besides its settings (subclasses: ``**kwargs: Unpack[RetrieverArgs]``)."""

    encoder: Encoder | None
    llm: LanguageModel | None
    device: str
    index_dir: str | Path | None


@dataclass
class RetrievalOutput:
    """Ranked passages for a batch of B queries.

    Attributes:
        indices: LongTensor [B, k], passage positions in the dataset's corpus, best first (with ``index_dir``,
            that corpus is the index's passages in index order: see :func:`check_index_passages`); ``-1`` = no
            passage (a query the method retrieved nothing for; the batch runner drops them).
        scores: FloatTensor [B, k].
        details: per query, method-specific facts worth keeping in predictions (seed facts, ...).
    """

    indices: torch.Tensor
    scores: torch.Tensor
    details: list[dict[str, Any]] = field(default_factory=list)


class Retriever(ABC):
    """Every method is built the same way: ``Method(settings, encoder=, llm=, device=, index_dir=)``.

    Args:
        settings: the method's settings object (:mod:`hyperrag.retrievers.settings`; composed from
            ``hydra_configs/method/<name>.yaml``, or :func:`hyperrag.config.method_settings` in code).
        encoder: the sentence embedder (methods that need none ignore it).
        llm: an :class:`hyperrag.llm.LLM`; ``None`` or ``NoLLM`` runs the method's LLM-free form.
        device: ``auto`` / ``cpu`` / ``cuda`` for the method's tensors.
        index_dir: retrieve over this built (and possibly updated) knowledge-graph index directory instead
            of an index keyed on the dataset; the dataset's corpus must then be the index's passages in index
            order (:func:`hyperrag.index.passages.dataset_for_index`, which ``retrieve.py index_dir=DIR``
            applies). Methods declare support with ``supports_index_dir`` and open it with
            :meth:`open_index_dir`.
    """

    name: str = "retriever"
    supports_index_dir: bool = False
    #: whether the method embeds with ``encoder`` (an index directory must then come from the same embedder)
    uses_encoder: ClassVar[bool] = True
    #: whether the method builds on the corpus's OpenIE triples; ``False`` (passages only: dense, BM25, no
    #: retrieval; or an index of its own: LinearRAG's spaCy Tri-Graph): the runner extracts none for it (no LLM,
    #: spaCy or released file is read) and records :meth:`own_extraction`
    uses_triples: ClassVar[bool] = True
    #: set when retrieving over an index directory: its manifest key (part of the batch runner's resume key)
    index_key: str | None = None

    def __init__(self, settings: Any, *, encoder: Encoder | None = None, llm: LanguageModel | None = None,
                 device: str = "auto", index_dir: str | Path | None = None) -> None:
        from hyperrag.utils.availability import resolve_device

        self.settings = settings
        self.encoder = encoder
        self.llm = llm
        self.device = resolve_device(device)
        if index_dir:
            require_index_dir_support(type(self))
        self.index_dir = str(index_dir) if index_dir else None
        #: LLM steps the method is configured to run but could not (no LLM, failed call, budget cap), by step
        self.skipped: Counter[str] = Counter()
        #: wall seconds spent in each named stage of ``retrieve`` over every batch (reported per query, e.g.
        #: CatRAG Table 6's seed and edge-weighting latencies)
        self.stage_seconds: Counter[str] = Counter()

    @classmethod
    def own_extraction(cls) -> dict[str, Any]:
        """The run's extraction record (``metrics.json``'s ``extraction``) for a method that reads no triples
        (``uses_triples`` false): nothing extracted; a method with an index of its own says what builds it."""
        return {"source": "none", "model": None, "path": None, "reason": "the method reads passages only"}

    @property
    def llm_available(self) -> bool:
        return bool(getattr(self.llm, "available", False))

    def skip(self, step: str, count: int = 1) -> None:
        """Record that a configured LLM step did not run ``count`` times (reported as ``llm_steps_skipped``)."""
        if count > 0:
            self.skipped[step] += int(count)

    @contextmanager
    def timed(self, stage: str, into: Counter[str] | None = None) -> Iterator[None]:
        """Add the wall time of the ``with`` block to ``into[stage]``: by default ``stage_seconds`` (a stage of
        ``retrieve``; metrics: ``<stage>_latency_seconds``, per query), else the method's own record (e.g. the
        stages of its ``index``)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            (self.stage_seconds if into is None else into)[stage] += time.perf_counter() - t0

    def artifacts(self) -> list[tuple[str, Any, str]]:
        """Trained parts in use: ``(setting, ArtifactRecord or None, checkpoint)`` each — what they trained on, so
        that no query is scored by an artifact that saw it (:func:`hyperrag.utils.artifacts.check_unseen`)."""
        return []

    #: set by the runner when a transductive-by-design artifact in use trained on the scored questions
    saw_questions: bool = False
    #: steps a gold-informed oracle decided whatever the LLM (e.g. ``("causal_gate",)`` for HugRAG's
    #: ``gates.verifier: oracle``): the run is an upper bound and is labelled so (``metrics.json``'s ``oracle_steps``)
    oracle_steps: tuple[str, ...] = ()

    @property
    def transductive(self) -> bool:
        """Whether the method builds its index from the very questions it is scored on (reported as such)."""
        return self.saw_questions

    @abstractmethod
    def index(self, dataset: Dataset) -> None:
        """Build or load whatever the method needs for ``dataset`` (cached on disk)."""

    @abstractmethod
    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        """Rank the corpus for a batch of questions."""

    def row_summary(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Run-level figures a method reads from its prediction rows (its ``details`` beside the gold), added to
        ``metrics.json`` beside ``metrics``; none by default."""
        return {}

    def describe(self) -> dict[str, Any]:
        """Settings and index statistics worth recording next to the metrics."""
        return {"method": self.name}

    def open_index_dir(self, dataset: Dataset, *, load: bool = True) -> KGIndex | None:
        """Open ``index_dir`` for ``dataset`` — the one way every method does it.

        Checks that the dataset's corpus is the index's passages in index order (:func:`check_index_passages`)
        and, for methods that embed, that the index was embedded with ``encoder`` (else one
        :class:`InputError` line naming both embedders: an index's entity, fact and passage embeddings are
        never mixed with another embedder's queries); sets :attr:`index_key`.

        Args:
            load: load the knowledge-graph index (graph, embeddings, provenance) and return it; ``False``
                reads and verifies only its passages and manifest (returns ``None``).
        """
        from hyperrag.index.kg_index import load_kg_directory
        from hyperrag.index.passages import index_passage_ids
        from hyperrag.index.store import IndexDirectory

        assert self.index_dir is not None, "no index_dir configured"
        kg = None
        if load:
            kg = load_kg_directory(self.index_dir)
            ids, key, embedded_with = kg.graph.passage_ids, kg.key, kg.encoder_key
        else:
            ids, _, key = index_passage_ids(self.index_dir)
            manifest = IndexDirectory(self.index_dir, stage="graph").manifest() or {}
            embedded_with = str(manifest.get("inputs", {}).get("encoder", ""))
        check_index_passages(ids, dataset, self.index_dir)
        configured = getattr(self.encoder, "model_key", None)
        if self.uses_encoder and embedded_with and configured and embedded_with != configured:
            raise InputError(f"the index was embedded with {embedded_with!r}, the configured embedder is "
                             f"{configured!r}; use the same embedder or rebuild the index with this one",
                             path=self.index_dir, field="embedder")
        self.index_key = key
        return kg


def require_index_dir_support(cls: type[Retriever]) -> None:
    """Raise :class:`InputError` unless the retriever class can retrieve over an index directory."""
    if not getattr(cls, "supports_index_dir", False):
        name = getattr(cls, "name", cls.__name__)
        raise InputError(f"method {name!r} cannot retrieve over an index directory (every built-in method "
                         "can; a retriever declares it with supports_index_dir = True)", field="index_dir")


def check_index_passages(index_ids: list[str], dataset: Dataset, index_dir: str | Path) -> None:
    """Raise :class:`InputError` unless ``dataset``'s corpus lists exactly the index's passages, in order."""
    if list(index_ids) != dataset.corpus.ids:
        raise InputError("the dataset's corpus is not this index's passages in index order; align it first "
                         "with hyperrag.index.passages.dataset_for_index (retrieve.py index_dir=DIR does)",
                         path=index_dir, field="index_dir")


def topk_rows(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k per row, clipped to the number of columns. Returns (indices [B, k'], values [B, k'])."""
    values, indices = torch.topk(scores, min(k, scores.shape[1]), dim=1)
    return indices, values


def complete_ranking(order: list[int], scores: torch.Tensor, k: int) -> list[int]:
    """``order`` (passage positions, best first) cut or completed to ``k`` passages by ``scores`` [P] (e.g. dense
    cosines): passages a method's own ranking did not reach follow in score order, so every row has ``k``."""
    out = list(dict.fromkeys(order))[:k]
    if len(out) < k:
        seen = set(out)
        for p in torch.argsort(scores, descending=True, stable=True).tolist():
            if p not in seen:
                out.append(p)
                seen.add(p)
                if len(out) == k:
                    break
    return out


def rank_scores(indices: torch.Tensor) -> torch.Tensor:
    """Reciprocal-rank scores [B, k] for rankings [B, k] that a method orders without a score of its own."""
    b, k = indices.shape
    return (1.0 / torch.arange(1, k + 1, dtype=torch.float32)).expand(b, k).clone()
