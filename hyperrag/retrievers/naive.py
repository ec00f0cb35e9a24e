"""Standard (naive) RAG: the top-k passages by dense similarity go to the QA reader.

``S = TopK(sim(q, d_i)); y = G(q, S)`` — the retrieval half is :class:`~hyperrag.retrievers.dense.DenseRetriever`
unchanged (same embedder, same cached passage embeddings); the generation half is the run's QA reader
(:mod:`hyperrag.generation.reader`), which answers from the first ``answer_top_n`` passages of this ranking
(``retrieve.py answer_top_n=k``; HyperRAG's table reports k = 1, 3, 5). Its own method so the papers' "Standard
RAG" / "Retrieval (Top-k)" rows are named as such in every table.
"""

from __future__ import annotations

from typing import Any

from hyperrag.retrievers.dense import DenseRetriever
from hyperrag.retrievers.settings import NaiveSettings


class NaiveRAGRetriever(DenseRetriever):
    """Args: as :class:`DenseRetriever` (``settings``: :class:`~hyperrag.retrievers.settings.NaiveSettings`)."""

    name = "naive"
    settings: NaiveSettings  # type: ignore[assignment]

    def describe(self) -> dict[str, Any]:
        return {"method": self.name, "retrieval": "dense top-k", "generator": "QA reader (answer_top_n passages)"}
