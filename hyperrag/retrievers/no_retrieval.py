"""No retrieval ("Naive Generation", zero-shot LM): the reader answers from the question alone.

The ranking is empty for every query — so recall, full-chain recall and context recall are 0 by definition, as
the papers report them — and the run's QA reader gets no passages: the ``grounded_answer`` task then asks for a
closed-book answer. The lower bound of every answer-quality table. With ``llm=oracle`` the reader answers
"unknown": the oracle answers from evidence shown, and none is.
"""

from __future__ import annotations

from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs
from hyperrag.retrievers.settings import NoRetrievalSettings


class NoRetrievalRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.NoRetrievalSettings` (none of its own).
        index_dir: accepted (its passages are checked against the dataset), never read.
    """

    name = "no_retrieval"
    supports_index_dir = True
    uses_encoder = False
    uses_triples = False
    settings: NoRetrievalSettings

    def __init__(self, settings: NoRetrievalSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)

    def index(self, dataset: Dataset) -> None:
        if self.index_dir:
            self.open_index_dir(dataset, load=False)

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        """Empty rankings: indices and scores of shape [B, 0]."""
        b = len(questions)
        return RetrievalOutput(torch.empty(b, 0, dtype=torch.long), torch.empty(b, 0))

    def describe(self) -> dict[str, Any]:
        return {"method": self.name, "retrieval": "none", "generator": "QA reader, closed book"}
