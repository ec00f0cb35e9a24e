"""Lexical query–item scores in [0, 1] for a batch of queries, as sparse-matrix products.

Three measures, all on bm25s tokens (lower-cased, English stop words removed, Snowball-stemmed by PyStemmer):
  * ``token_overlap`` — the normalised token overlap ``|Q ∩ T| / |Q|``: the share of the query's distinct tokens
                  that the item's text holds (HugRAG's Lex, Appendix B.2, over a node's title and summary);
  * ``bm25``    — bm25s's BM25 scores of the query against every item, divided by the query's best score;
  * ``overlap`` — the token-set overlap coefficient ``|Q ∩ T| / min(|Q|, |T|)`` (1 when a short entity name
                  is wholly in the question, or a question wholly covered by a long module text).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
import torch

LEXICAL_METHODS = ("token_overlap", "bm25", "overlap")


class LexicalScorer:
    """Index item texts once; score query batches against all of them.

    Args:
        texts: N item texts (entity names, module texts...).
        method: ``token_overlap``, ``bm25`` or ``overlap``.
        stemmer: Snowball language for PyStemmer, or None.
        stopwords: bm25s stop-word list name (``en``) or None.
        k1, b: BM25 parameters.
    """

    def __init__(self, texts: Sequence[str], method: str = "bm25", stemmer: str | None = "english",
                 stopwords: str | None = "en", k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        if method not in LEXICAL_METHODS:
            raise ValueError(f"lexical method must be one of {LEXICAL_METHODS}, got {method!r}")
        self.method = method
        self.stopwords = stopwords
        self._stemmer = None
        if stemmer:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(stemmer)
        self.num_items = len(texts)
        tokens = self._tokenize(list(texts))
        self.vocab: dict[str, int] = {}
        for toks in tokens:
            for t in toks:
                self.vocab.setdefault(t, len(self.vocab))
        if method == "bm25":
            retriever = bm25s.BM25(k1=k1, b=b)
            ids = [[self.vocab[t] for t in toks] for toks in tokens]
            retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=self.vocab), show_progress=False)
            sc = retriever.scores
            nvocab = len(sc["indptr"]) - 1
            # rows = tokens, cols = items: a query's scores are the sum of its tokens' rows
            self.matrix = sp.csr_matrix((sc["data"], sc["indices"], sc["indptr"]), shape=(nvocab, self.num_items))
        else:
            self.matrix = self._binary(tokens).T.tocsr()  # [V, N]
            self.item_size = np.asarray([len(set(t)) for t in tokens], dtype=np.float32)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(texts, stopwords=self.stopwords, stemmer=self._stemmer, return_ids=False,
                              show_progress=False)

    def _binary(self, tokens: list[list[str]]) -> sp.csr_matrix:
        rows, cols = [], []
        for i, toks in enumerate(tokens):
            ids = {self.vocab[t] for t in toks if t in self.vocab}
            rows.extend([i] * len(ids))
            cols.extend(sorted(ids))
        return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                             shape=(len(tokens), len(self.vocab)))

    def scores(self, queries: Sequence[str]) -> torch.Tensor:
        """FloatTensor [B, N] in [0, 1] (CPU)."""
        tokens = self._tokenize(list(queries))
        if self.method == "bm25":
            rows, cols, vals = [], [], []
            nvocab = self.matrix.shape[0]
            for i, toks in enumerate(tokens):
                for t in toks:  # repeated query tokens count again, as bm25s does
                    j = self.vocab.get(t)
                    if j is not None and j < nvocab:
                        rows.append(i)
                        cols.append(j)
                        vals.append(1.0)
            q = sp.csr_matrix((vals, (rows, cols)), shape=(len(tokens), nvocab), dtype=np.float32)
            out = np.asarray((q @ self.matrix).todense(), dtype=np.float32)
            top = out.max(axis=1, keepdims=True)
            out = np.divide(out, top, out=np.zeros_like(out), where=top > 0)
        else:
            q = self._binary(tokens)
            inter = np.asarray((q @ self.matrix).todense(), dtype=np.float32)  # [B, N] shared tokens
            qsize = np.asarray([len(set(t)) for t in tokens], dtype=np.float32)[:, None]
            denom = qsize if self.method == "token_overlap" else np.minimum(qsize, self.item_size[None, :])
            out = np.divide(inter, denom, out=np.zeros_like(inter), where=denom > 0)
        return torch.from_numpy(out)
