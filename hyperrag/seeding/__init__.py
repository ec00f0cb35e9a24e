"""Seeding operators: lexical and hybrid query–item scores, MMR diversity."""

from hyperrag.seeding.hybrid import HybridScorer
from hyperrag.seeding.lexical import LexicalScorer
from hyperrag.seeding.mmr import mmr_select

__all__ = ["HybridScorer", "LexicalScorer", "mmr_select"]
