"""Which extraction builds every knowledge graph (``hydra_configs/extractor/``): the LLM's OpenIE or spaCy's."""

from __future__ import annotations

from typing import Literal

from hyperrag.config.validation import PositiveInt, settings

#: the spaCy triple designs (:mod:`hyperrag.extraction.spacy_openie`)
TRIPLE_DESIGNS = ("subject_verb", "title_subject", "title_and_subject")


@settings
class ExtractorSettings:
    """The extraction every method and dataset builds its graph from (``extractor=llm|spacy``).

    Attributes:
        source: ``llm`` (a released OpenIE file where ``data.openie`` finds one, else OpenIE with the configured
            LLM; no LLM and no file: no triples) or ``spacy`` (spaCy's parse, for every dataset, over any file).
        triples: the spaCy triple design: ``subject_verb`` (a sentence's entities tied to its grammatical
            subject entity by the root verb), ``title_subject`` (every entity of a passage tied to the passage's
            title by its governing word and preposition, e.g. "directed by"), ``title_and_subject`` (both).
        dates: dates are entities (objects of triples), for comparison questions.
        noun_chunks: proper-noun chunks that NER missed are entities too.
        concepts: common-noun chunks ("atrial fibrillation", "drug-drug interactions") are entities too —
            ``untitled``: only in passages without a title (the layout where ``title_subject`` has no title to tie
            a passage's entities to and falls back to ``subject_verb``, whose subjects in scientific prose are rarely
            names: HolisQA's abstracts), ``all``: every passage, ``none``: names only (the Wikipedia design).
        batch_size: passages per ``nlp.pipe`` batch.
        shard_size: passages per cached parse shard (the unit a killed extraction resumes from).
    """

    source: Literal["llm", "spacy"]
    triples: Literal["subject_verb", "title_subject", "title_and_subject"]
    dates: bool
    noun_chunks: bool
    batch_size: PositiveInt
    shard_size: PositiveInt
    concepts: Literal["none", "untitled", "all"] = "untitled"


__all__ = ["TRIPLE_DESIGNS", "ExtractorSettings"]
