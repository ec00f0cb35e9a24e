"""Corpora, query files and OpenIE records: readers with validation that names file, line and field."""

from hyperrag.data.datasets import (
    hipporag2_release_dataset,
    hotpotqa_dataset,
    hover_dataset,
    jsonl_dataset,
    multiple_choice_dataset,
    musique_dataset,
    sample_dataset,
    sample_documents,
)
from hyperrag.data.jsonl import read_jsonl_corpus, read_jsonl_queries
from hyperrag.data.openie import OpenIERecords, read_openie
from hyperrag.data.types import Corpus, Dataset, Passage, Query, SubQuestion

__all__ = [
    "Corpus", "Dataset", "OpenIERecords", "Passage", "Query", "SubQuestion", "hipporag2_release_dataset",
    "hotpotqa_dataset", "hover_dataset", "jsonl_dataset", "multiple_choice_dataset", "musique_dataset",
    "read_jsonl_corpus", "read_jsonl_queries", "read_openie", "sample_dataset", "sample_documents",
]
