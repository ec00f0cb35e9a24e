"""LLM-free extraction: library NLP pipelines that stand in for the LLM's OpenIE (``extractor=spacy``)."""
