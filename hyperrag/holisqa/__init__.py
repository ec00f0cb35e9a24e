"""HolisQA-style question sets for any corpus (``python -m hyperrag.holisqa``); see :mod:`.builder`."""

from hyperrag.holisqa.builder import (
                                      BuildResult,
                                      HolisQABuilder,
                                      HolisQASettings,
                                      Sentence,
                                      corpus_sentences,
                                      holisqa_settings,
                                      make_slices,
                                      write_dataset,
)

__all__ = ["BuildResult", "HolisQABuilder", "HolisQASettings", "Sentence", "corpus_sentences", "holisqa_settings",
           "make_slices", "write_dataset"]
