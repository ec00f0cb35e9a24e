"""HolisQA-style question sets for any corpus (``python -m hyperrag.holisqa``); see :mod:`.builder`."""

from hyperrag.holisqa.builder import (
                                      BuildResult,
                                      HolisQABuilder,
                                      Sentence,
                                      corpus_sentences,
                                      make_slices,
                                      write_dataset,
)

__all__ = ["BuildResult", "HolisQABuilder", "Sentence", "corpus_sentences", "make_slices", "write_dataset"]
