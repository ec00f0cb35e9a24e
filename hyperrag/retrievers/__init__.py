"""Retrieval methods; each is a ``_target_`` in ``hyperrag/conf/method``."""

from hyperrag.retrievers.base import RetrievalOutput, Retriever
from hyperrag.retrievers.bm25 import BM25Retriever
from hyperrag.retrievers.dense import DenseRetriever

__all__ = ["BM25Retriever", "DenseRetriever", "RetrievalOutput", "Retriever"]
