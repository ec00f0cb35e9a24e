"""The LLM-free OpenIE stand-in (``extractor=spacy``): entities and triples from spaCy's parse, HippoRAG's layout.

Every passage is parsed once by :func:`hyperrag.extraction.spacy_pipeline.parse` (``nlp.pipe``, batched); the parses
are cached as DocBin shards of ``shard_size`` passages (``<cache>/spacy/<model>/<corpus digest>/``), so a killed
run resumes from the last finished shard and a new triple design re-reads the parses instead of parsing again. The
triples of a design are then written once as an OpenIE file keyed by corpus digest + settings + model (a rerun
parses nothing and reads nothing but that file)::

    {"docs": [{"idx": i, "passage": "Title\\nText", "extracted_entities": [...],
               "extracted_triples": [[s, r, o], ...], "sentences": [{"text": ..., "entities": [...]}, ...]}],
     "model": MODEL_LABEL, "source": "spacy", "settings": {...}}

The triples are designed for the retrieval they feed: in HippoRAG 2 a passage reaches an entity node only through
its triples, so a bridge entity must be a *node shared by both passages* — the passage naming it, and the passage
about it. Wikipedia-style passages are about their title (the subject of most sentences, "he" / "she" / "it"), so
``title_subject`` ties every entity of a passage to the title (relation: the governing word and its preposition,
"directed by", "daughter of", "born in"): the passage about X always holds the node X, and any passage naming X
links to it. ``subject_verb`` (the first prototype) ties a sentence's entities to its grammatical subject entity;
``title_and_subject`` writes both. Entities are NER spans of naming labels (dates optional), plus proper-noun chunks
NER missed (``noun_chunks``), a leading "the" and a trailing "'s" stripped. Passages without a title (scientific
abstracts: HolisQA) have no title to tie their entities to, and their sentences' subjects are rarely names, so with
names only most of them get no triple at all (HolisQA medicine: 802 of 1,068 passages of a 300-abstract cut):
``concepts`` (``untitled``: those passages only) makes every noun chunk an entity too, so ``subject_verb`` ties each
sentence's concepts to its subject concept ("atrial fibrillation patients" —require→ "polypharmacy").

Usage::

    path, report = spacy_openie(dataset.corpus.passages, settings, cache_dir / "openie")
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.extraction.spacy_pipeline import MODEL_LABEL, NAMED_LABELS, PACKAGE, load_pipeline, parse

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

    from hyperrag.extraction.settings import ExtractorSettings

log = logging.getLogger(__name__)

Triple = list[str]
#: "Teutberga( died 875)": 2Wiki glues the title to its parenthesis, which the tokenizer then misreads
_GLUED_PAREN = re.compile(r"(\w)\(")
_LEADING_THE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_TRAILING_POSS = re.compile(r"\s*['’]s$")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")
_SUBJECTS = ("nsubj", "nsubjpass")
_CLIMB = ("conj", "appos", "compound")
#: a title's disambiguation: "Lee Hall (playwright)" is the node "Lee Hall", which other passages mention
_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


@dataclass
class SpacyReport:
    """What one extraction did: passages parsed now, parses read from the shard cache, seconds."""

    total: int
    parsed: int
    reused_parses: int
    reused_file: bool
    seconds: float
    output_path: str


def clean_text(text: str) -> str:
    """The passage text as parsed (a space before a glued parenthesis)."""
    return _GLUED_PAREN.sub(r"\1 (", text)


def entity_name(text: str) -> str:
    """A mention as a node name: whitespace collapsed, a leading article, a trailing "'s" and edge punctuation
    stripped (case kept; the graph lower-cases)."""
    name = " ".join(text.split())
    if name.count("(") != name.count(")"):  # a mention cut inside a parenthesis
        name = name.replace("(", " ").replace(")", " ").strip()
    name = _TRAILING_POSS.sub("", _LEADING_THE.sub("", name))
    return _EDGE_PUNCT.sub("", name)


def title_entity(title: str) -> str:
    """The entity a passage's title names ('' when the title names none: no title, or only a disambiguation or
    punctuation): the one rule :func:`passage_triples` ties triples to and :func:`openie_file` keys the file by."""
    return entity_name(_DISAMBIGUATION.sub("", title))


def _key(name: str) -> str:
    return re.sub(r"[\W_]+", " ", name.lower()).strip()


def proper_chunks(sent: Span) -> list[Span]:
    """Noun chunks of ``sent`` headed by a proper noun, cut to start at their first proper noun ("side Melton
    Town" → "Melton Town")."""
    out = []
    for chunk in sent.noun_chunks:
        if chunk.root.pos_ != "PROPN":
            continue
        start = next(t.i for t in chunk if t.pos_ == "PROPN")
        out.append(chunk.doc[start:chunk.end])
    return out


#: what a concept chunk may not start with (cut off): determiners, pronouns, numbers, punctuation, conjunctions
_CONCEPT_CUT = frozenset({"DET", "PRON", "NUM", "PUNCT", "CCONJ", "SCONJ", "ADP", "PART", "SYM", "X", "SPACE"})


def concept_chunks(sent: Span) -> list[Span]:
    """Noun chunks of ``sent`` headed by a common or proper noun, cut to start after any leading determiner,
    pronoun, number or punctuation ("the elderly patients" → "elderly patients", "12 studies" → "studies"); a
    chunk left without three letters is dropped ("p", "CI 95")."""
    out = []
    for chunk in sent.noun_chunks:
        if chunk.root.pos_ not in ("NOUN", "PROPN"):
            continue
        start = next((t.i for t in chunk if t.pos_ not in _CONCEPT_CUT), None)
        if start is None or start > chunk.root.i:
            continue
        span = chunk.doc[start:chunk.end]
        if sum(c.isalpha() for c in span.text) >= 3:
            out.append(span)
    return out


def sentence_mentions(sent: Span, *, dates: bool, noun_chunks: bool, concepts: bool = False) -> list[Span]:
    """The entity mentions of ``sent``: NER spans of naming labels (``DATE`` only with ``dates``) and, with
    ``noun_chunks``, proper-noun chunks, with ``concepts`` every noun chunk (:func:`concept_chunks`); overlapping
    spans keep the longest, in text order."""
    labels = NAMED_LABELS if dates else NAMED_LABELS - {"DATE"}
    spans = [e for e in sent.ents if e.label_ in labels]
    if noun_chunks:
        spans += proper_chunks(sent)
    if concepts:
        spans += concept_chunks(sent)
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (-(s.end - s.start), s.start)):
        if all(span.end <= k.start or span.start >= k.end for k in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: s.start)


def relation(span: Span) -> str:
    """The relation that ties ``span`` into its sentence: the governing word (surface form, lower case) and the
    preposition between them ("directed by", "daughter of", "born in"); the root's word for the root itself."""
    tok: Token = span.root
    while tok.dep_ in _CLIMB and tok.head is not tok and tok.head.i not in range(span.start, span.end):
        tok = tok.head
    prep = ""
    if tok.dep_ == "pobj" and tok.head.dep_ in ("prep", "agent", "dative") and tok.head.head is not tok.head:
        prep = tok.head.lower_
        gov = tok.head.head
    else:
        gov = tok.head
    if gov is tok:  # the mention is the root
        return "is"
    while gov.dep_ in ("prep", "agent") and gov.head is not gov:  # "in front of"
        gov = gov.head
    word = gov.lower_ if gov.pos_ in ("VERB", "NOUN", "ADJ", "PROPN", "AUX", "ADP") else "related to"
    return f"{word} {prep}".strip()


def subject_mention(sent: Span, mentions: list[Span]) -> Span | None:
    """The mention holding the sentence root's grammatical subject, if any."""
    subj = next((t for t in sent.root.children if t.dep_ in _SUBJECTS), None)
    if subj is None:
        return None
    return next((m for m in mentions if m.start <= subj.i < m.end), None)


def passage_triples(doc: Doc, title: str, settings: ExtractorSettings) -> tuple[list[str], list[Triple]]:
    """The entities and triples of one parsed passage under ``settings.triples``.

    Args:
        doc: the passage text's parse (:func:`clean_text`).
        title: the passage's title ('' for none: ``title_subject`` then falls back to ``subject_verb``).
        settings: the extractor settings (design, dates, noun chunks).

    Returns:
        ``(entities, triples)``: names in first-mention order (the title first), ``[s, r, o]`` lists, each once.
    """
    title_name = title_entity(title)
    title_key = _key(title_name)
    design = settings.triples if title_key else "subject_verb"
    concepts = settings.concepts == "all" or (settings.concepts == "untitled" and not title_key)
    entities: dict[str, None] = {title_name: None} if title_key and design != "subject_verb" else {}
    triples: dict[tuple[str, str, str], None] = {}

    def is_title(name: str) -> bool:
        k = _key(name)
        return bool(title_key) and (k == title_key or (len(k) > 3 and (k in title_key or title_key in k)))

    for sent in doc.sents:
        mentions = sentence_mentions(sent, dates=settings.dates, noun_chunks=settings.noun_chunks, concepts=concepts)
        named = [(m, entity_name(m.text)) for m in mentions]
        named = [(m, n) for m, n in named if _key(n)]
        for _, n in named:
            entities.setdefault(title_name if is_title(n) else n, None)
        if design in ("title_subject", "title_and_subject"):
            for m, n in named:
                if not is_title(n):
                    triples.setdefault((title_name, relation(m), n), None)
        if design in ("subject_verb", "title_and_subject"):
            subj = subject_mention(sent, [m for m, _ in named])
            if subj is None:
                continue
            s_name = entity_name(subj.text)
            if design == "title_and_subject" and is_title(s_name):
                continue  # the title's triples are written above
            root = sent.root.lower_
            for m, n in named:
                if m is not subj and _key(n) != _key(s_name):
                    rel = relation(m)
                    triples.setdefault((s_name, rel if rel != "is" else root, n), None)
    return list(entities), [list(t) for t in triples]


# ---- the corpus, cached --------------------------------------------------------------------------------------
def _passage_parts(p: Any) -> tuple[str, str]:
    if isinstance(p, str):
        return "", p
    if isinstance(p, dict):
        return str(p.get("title") or ""), str(p.get("text") or "")
    return str(getattr(p, "title", "") or ""), str(p.text)


def corpus_digest(passages: Sequence[Any]) -> str:
    """A digest of the passages' titles and texts, in order."""
    from hyperrag.utils.hashing import Hasher

    h = Hasher()
    for title, text in map(_passage_parts, passages):
        h.update(title).update(b"\0").update(text).update(b"\1")
    return h.hexdigest(16)


def _model_slug() -> str:
    """The model and spaCy versions in the cache key, read from the installed packages (the model is not loaded:
    a finished extraction is reused without it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        model_version = version(PACKAGE.replace("_", "-"))
        spacy_version = version("spacy")
    except PackageNotFoundError:  # the pipeline's own error names what to install
        load_pipeline()
        raise
    return f"{PACKAGE}-{model_version}-spacy{spacy_version}"


def parsed_corpus(passages: Sequence[Any], settings: ExtractorSettings, cache_dir: str | Path,
                  progress: bool = True) -> tuple[list[Doc], int, int]:
    """The parse of every passage text, from the shard cache where there (``<cache_dir>/spacy/...``), else parsed
    and written shard by shard (atomic: a killed run keeps every finished shard).

    Returns:
        ``(docs, parsed now, read from cache)``.
    """
    from spacy.tokens import DocBin

    from hyperrag.utils.hashing import Hasher

    nlp = load_pipeline()
    texts = [clean_text(text) for _, text in map(_passage_parts, passages)]
    root = Path(cache_dir) / "spacy" / _model_slug()
    root.mkdir(parents=True, exist_ok=True)
    docs: list[Doc] = []
    parsed = reused = 0
    n = settings.shard_size
    for start in range(0, len(texts), n):
        part = texts[start:start + n]
        h = Hasher()
        for t in part:
            h.update(t).update(b"\0")
        shard = root / f"shard-{h.hexdigest(16)}.spacy"
        if shard.exists():
            try:
                got = list(DocBin().from_bytes(shard.read_bytes()).get_docs(nlp.vocab))
                if len(got) == len(part):
                    docs += got
                    reused += len(part)
                    continue
            except (ValueError, OSError) as err:  # a torn shard: parse it again
                log.warning("spaCy shard %s unreadable (%s): parsing it again", shard, err)
        got = list(parse(part, batch_size=settings.batch_size, progress=progress and len(texts) > n,
                         total=len(part)))
        from hyperrag.utils.atomic import atomic_write_bytes

        atomic_write_bytes(shard, DocBin(docs=got, store_user_data=False).to_bytes())
        docs += got
        parsed += len(part)
        if progress:
            log.info("spaCy: %d/%d passages parsed", start + len(part), len(texts))
    return docs, parsed, reused


def openie_file(passages: Sequence[Any], settings: ExtractorSettings, out_dir: str | Path) -> Path:
    """The OpenIE file of (corpus, extraction settings, model): changes with any of them."""
    from hyperrag.utils.hashing import Hasher

    key = {k: v for k, v in asdict(settings).items() if k not in ("batch_size", "shard_size", "source")}
    if key.get("concepts") == "none" or (key.get("concepts") == "untitled"
                                         and all(_key(title_entity(_passage_parts(p)[0])) for p in passages)):
        del key["concepts"]  # names only (or every passage titled): the file of the names-only design, as before
    h = Hasher().update(json.dumps(key, sort_keys=True)).update(MODEL_LABEL).update(_model_slug())
    h.update(corpus_digest(passages))
    return Path(out_dir) / f"openie_spacy_{settings.triples}_{h.hexdigest(12)}.json"


def spacy_openie(passages: Sequence[Any], settings: ExtractorSettings, out_dir: str | Path,
                 cache_dir: str | Path | None = None, progress: bool = True) -> tuple[Path, SpacyReport]:
    """The spaCy OpenIE file of ``passages`` (Passages, ``{"title", "text"}`` dicts or strings) under ``out_dir``,
    reusing a finished one (nothing parsed) and the cached parses (``cache_dir``, default ``out_dir``'s parent).

    Returns:
        The file (read it with :func:`hyperrag.data.openie.read_openie`) and what was done.
    """
    from hyperrag.extraction.spacy_pipeline import sentence_entities
    from hyperrag.llm.openie import write_openie
    from hyperrag.llm.tasks.base import passage_string

    t0 = time.perf_counter()
    path = openie_file(passages, settings, out_dir)
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if len(data.get("docs", [])) == len(passages):
                log.info("spaCy extraction: reusing %s", path)
                return path, SpacyReport(len(passages), 0, 0, True, round(time.perf_counter() - t0, 3), str(path))
        except ValueError:
            pass
    parses, parsed, reused = parsed_corpus(passages, settings, cache_dir or Path(out_dir).parent, progress)
    docs = []
    for i, (p, doc) in enumerate(zip(passages, parses)):
        title, _ = _passage_parts(p)
        ents, triples = passage_triples(doc, title, settings)
        docs.append({"idx": i, "passage": passage_string(p), "extracted_entities": ents,
                     "extracted_triples": triples,
                     "sentences": [{"text": s.text, "entities": list(s.entities)} for s in sentence_entities(doc)]})
    write_openie(path, docs, model=MODEL_LABEL, style=f"spacy-{settings.triples}", source="spacy",
                 settings={k: v for k, v in asdict(settings).items() if k != "source"})
    report = SpacyReport(len(passages), parsed, reused, False, round(time.perf_counter() - t0, 3), str(path))
    log.info("spaCy extraction (%s): %s", settings.triples, report)
    return path, report


__all__ = [
    "SpacyReport",
    "clean_text",
    "concept_chunks",
    "corpus_digest",
    "entity_name",
    "openie_file",
    "parsed_corpus",
    "passage_triples",
    "relation",
    "sentence_mentions",
    "spacy_openie",
]
