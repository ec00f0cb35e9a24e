"""BM25 (bm25s: sparse-matrix BM25 with English stemming and stop words)."""

from __future__ import annotations

import torch

from hyperrag.data.types import Dataset
from hyperrag.retrievers.base import RetrievalOutput, Retriever, check_index_passages


class BM25Retriever(Retriever):
    """Args:
        k1, b: BM25 parameters.
        stemmer: Snowball language for PyStemmer, or None for no stemming.
        stopwords: bm25s stop-word list name (``en``) or None.
        index_dir: retrieve over this knowledge-graph index directory's passages.
    """

    name = "bm25"
    supports_index_dir = True

    def __init__(self, *, k1: float = 1.5, b: float = 0.75, stemmer: str | None = "english",
                 stopwords: str | None = "en", encoder: object = None, llm: object = None,
                 device: str = "cpu", index_dir: str | None = None) -> None:
        super().__init__(encoder=encoder, llm=llm, device=device)
        self.index_dir = index_dir
        self.k1, self.b = k1, b
        self.stemmer_name = stemmer
        self.stopwords = stopwords
        self._bm25 = None
        self._stemmer = None
        self._num_docs = 0

    def index(self, dataset: Dataset) -> None:
        import bm25s

        if self.index_dir:
            from hyperrag.index.passages import index_passage_ids

            ids, _, self.index_key = index_passage_ids(self.index_dir)
            check_index_passages(ids, dataset, self.index_dir)
        if self.stemmer_name:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(self.stemmer_name)
        texts = [p.content for p in dataset.corpus.passages]
        tokens = bm25s.tokenize(texts, stopwords=self.stopwords, stemmer=self._stemmer, show_progress=False)
        self._bm25 = bm25s.BM25(k1=self.k1, b=self.b)
        self._bm25.index(tokens, show_progress=False)
        self._num_docs = len(texts)

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        import bm25s

        assert self._bm25 is not None, "call index() first"
        tokens = bm25s.tokenize(questions, stopwords=self.stopwords, stemmer=self._stemmer, show_progress=False)
        docs, scores = self._bm25.retrieve(tokens, k=min(top_k, self._num_docs), show_progress=False, n_threads=1)
        return RetrievalOutput(torch.as_tensor(docs, dtype=torch.long), torch.as_tensor(scores, dtype=torch.float32))
