"""BM25 (bm25s: sparse-matrix BM25 with English stemming and stop words)."""

from __future__ import annotations

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs
from hyperrag.retrievers.settings import BM25Settings


class BM25Retriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.BM25Settings` (k1, b, stemmer, stop words).
        index_dir: retrieve over this knowledge-graph index directory's passages.
        Others: see :class:`~hyperrag.retrievers.base.Retriever` (no encoder, no LLM needed).
    """

    name = "bm25"
    supports_index_dir = True
    uses_encoder = False
    uses_triples = False
    settings: BM25Settings

    def __init__(self, settings: BM25Settings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self._bm25 = None
        self._stemmer = None
        self._num_docs = 0

    def index(self, dataset: Dataset) -> None:
        import bm25s

        s = self.settings
        if self.index_dir:
            self.open_index_dir(dataset, load=False)
        if s.stemmer:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(s.stemmer)
        texts = [p.content for p in dataset.corpus.passages]
        tokens = bm25s.tokenize(texts, stopwords=s.stopwords, stemmer=self._stemmer, show_progress=False)
        self._bm25 = bm25s.BM25(k1=s.k1, b=s.b)
        self._bm25.index(tokens, show_progress=False)
        self._num_docs = len(texts)

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        import bm25s

        assert self._bm25 is not None, "call index() first"
        tokens = bm25s.tokenize(questions, stopwords=self.settings.stopwords, stemmer=self._stemmer,
                                show_progress=False)
        docs, scores = self._bm25.retrieve(tokens, k=min(top_k, self._num_docs), show_progress=False, n_threads=1)
        return RetrievalOutput(torch.as_tensor(docs, dtype=torch.long), torch.as_tensor(scores, dtype=torch.float32))
