"""Retrieval methods. Each method's settings class (:mod:`hyperrag.retrievers.settings`) is the ``_target_`` of
``hydra_configs/method/<name>.yaml`` and names the retriever class that
:func:`hyperrag.runners.prepare.build_retriever` builds from it."""

from hyperrag.retrievers.base import RetrievalOutput, Retriever
from hyperrag.retrievers.bm25 import BM25Retriever
from hyperrag.retrievers.dense import DenseRetriever

__all__ = ["BM25Retriever", "DenseRetriever", "RetrievalOutput", "Retriever"]
