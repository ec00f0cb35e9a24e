"""LinearRAG's relation-free Tri-Graph: entities, the sentences that mention them, and their passages.

Built from spaCy NER alone (no LLM, no relation): every named entity of a passage is an entity node, every
sentence that mentions at least one entity is a sentence, and two sparse mention matrices tie them together:

* ``entity_sentence`` [E, S]: 1 where the entity is named in the sentence (what semantic bridging walks);
* ``sentence_passage`` [S, P]: 1 where the sentence occurs in the passage.

The PPR graph over entity and passage nodes (sentences are not PPR nodes in the authors' code) has an edge from
each passage to each entity it names, weighted ``count(entity in passage) / Σ counts`` (case-sensitive substring
counts of the passage text, as ``LinearRAG.add_entity_to_passage_edges``), and optionally an edge of weight 1
between consecutive passages (``LinearRAG.add_adjacent_passage_edges``: the authors number every chunk
``"<idx>:"`` and link neighbours).

Entities and sentences are global (one node per distinct surface form / sentence text), as the authors'
``sentence_to_entities`` dict and hash-id stores make them.

The per-passage NER (:class:`PassageMentions`) is cached in a :class:`MentionStore` keyed by the passage text's
digest, so indexing new passages parses only them (the authors' ``load_existing_data`` / ``merge_ner_results``);
the matrices are re-assembled from the records of the current corpus in linear time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from hyperrag.utils.hashing import text_digest

if TYPE_CHECKING:
    from hyperrag.extraction.spacy_pipeline import Components

#: spaCy entity labels the authors drop (``SpacyNER.extract_entities_sentences``): every other label is kept
EXCLUDED_LABELS = frozenset({"ORDINAL", "CARDINAL"})


@dataclass(frozen=True)
class PassageMentions:
    """One passage's NER: its sentences that name an entity, each with the entities it names (in order, once).

    Attributes:
        sentences: ``((sentence text, (entity, ...)), ...)``.
    """

    sentences: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def entities(self) -> tuple[str, ...]:
        """The passage's entities, first mention first, each once."""
        return tuple(dict.fromkeys(e for _, ents in self.sentences for e in ents))


def parse_mentions(texts: Sequence[str], excluded: frozenset[str] = EXCLUDED_LABELS,
                   batch_size: int = 64, progress: bool = False,
                   components: Components = "ner", line_breaks: bool = False) -> list[PassageMentions]:
    """NER every text with the project's one spaCy pipeline (:mod:`hyperrag.extraction.spacy_pipeline`).

    Args:
        texts: passage texts.
        excluded: entity labels left out (the authors': ``ORDINAL``, ``CARDINAL``).
        batch_size: texts per ``nlp.pipe`` batch.
        components: ``ner`` (NER and the sentence segmenter only) or ``full`` (the whole pipeline, sentences from
            the parser, as the authors' ``spacy.load``).
        line_breaks: a line break ends a sentence (``components="ner"`` only): a passage's title line is its own
            sentence, so no entity straddles title and text.

    Returns:
        One :class:`PassageMentions` per text, sentences without an entity left out.
    """
    from hyperrag.extraction.spacy_pipeline import parse, sentence_entities

    labels = entity_labels(excluded, components)
    out = []
    for doc in parse(texts, batch_size=batch_size, components=components, line_breaks=line_breaks,
                     progress=progress, total=len(texts)):
        out.append(PassageMentions(tuple((s.text, s.entities) for s in sentence_entities(doc, labels)
                                         if s.entities)))
    return out


def with_title_mentions(mentions: Sequence[PassageMentions], titles: Sequence[str]) -> list[PassageMentions]:
    """A labelled departure from the authors (``title_mentions: true``, off by default): each passage's title as an
    entity mention of that passage, what a transformer NER most likely finds where spaCy's small model garbles the
    title line (``title\ntext``: "s'appelle Maurice\nMa" for "Ma Femme S'Appelle Maurice").

    The title is added to the passage's first recorded sentence when that sentence starts with the title (the
    title line opens the passage text and, without ``line_break_sentences``, the first sentence), else the title
    line becomes a sentence of its own naming only the title. A title the NER already found, or an empty title,
    changes nothing. The NER records themselves are not changed (the store stays the authors' reading)."""
    out = []
    for m, title in zip(mentions, titles):
        title = title.strip()
        if not title or title in m.entities:
            out.append(m)
            continue
        sents = list(m.sentences)
        if sents and sents[0][0].startswith(title):
            sents[0] = (sents[0][0], (title, *sents[0][1]))
        else:
            sents.insert(0, (title, (title,)))
        out.append(PassageMentions(tuple(sents)))
    return out


def entity_labels(excluded: frozenset[str] = EXCLUDED_LABELS, components: Components = "ner") -> frozenset[str]:
    """The NER labels of the project's spaCy pipeline (``components`` as :func:`parse_mentions`) that name a
    Tri-Graph entity: all but ``excluded``."""
    from hyperrag.extraction.spacy_pipeline import load_pipeline

    return frozenset(load_pipeline(components=components).get_pipe("ner").labels) - excluded


def question_entities(questions: Sequence[str], excluded: frozenset[str] = EXCLUDED_LABELS,
                      components: Components = "ner") -> list[list[str]]:
    """Each question's named entities (:func:`~hyperrag.extraction.spacy_pipeline.named_entities`, the labels
    passages are read with), lower-cased, each once, first mention first (``SpacyNER.question_ner``: a ``set``, so
    the authors' order is Python's hash order; ours is deterministic). ``components``: as :func:`parse_mentions`."""
    from hyperrag.extraction.spacy_pipeline import named_entities, parse

    labels = entity_labels(excluded, components)
    return [list(dict.fromkeys(n.lower() for n in named_entities(list(doc.ents), labels)))
            for doc in parse(questions, components=components)]


def mention_store_path(root: str | Path, excluded: frozenset[str] = EXCLUDED_LABELS,
                       components: Components = "ner", line_breaks: bool = False) -> Path:
    """Where the NER records of the project's spaCy model (with ``excluded`` labels left out, parsed by the
    ``components`` set, with or without ``line_breaks``) live under ``root``."""
    from hyperrag.extraction.spacy_pipeline import MODEL_LABEL

    key = (MODEL_LABEL + "|" + ",".join(sorted(excluded)) + ("" if components == "full" else f"|{components}")
           + ("|line_breaks" if line_breaks else ""))
    return Path(root) / "linearrag" / f"mentions-{text_digest(key, 12)}.jsonl"


class MentionStore:
    """Per-passage NER records on disk (append-only JSON lines ``{"key", "sentences"}``), keyed by the digest of
    the passage text and of the model label: what was parsed once is never parsed again.

    Args:
        path: the JSONL file (created on first write).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.records: dict[str, PassageMentions] = {}
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.records[row["key"]] = PassageMentions(tuple((s, tuple(e)) for s, e in row["sentences"]))

    @staticmethod
    def key(text: str) -> str:
        return text_digest(text, 32)

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts without a record, in order."""
        return [t for t in dict.fromkeys(texts) if self.key(t) not in self.records]

    def add(self, texts: Sequence[str], mentions: Sequence[PassageMentions]) -> None:
        """Record (and append to the file) the NER of ``texts``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            for text, m in zip(texts, mentions):
                k = self.key(text)
                self.records[k] = m
                f.write(json.dumps({"key": k, "sentences": [[s, list(e)] for s, e in m.sentences]}) + "\n")

    def get(self, texts: Sequence[str]) -> list[PassageMentions]:
        return [self.records[self.key(t)] for t in texts]


@dataclass
class TriGraph:
    """Entities, sentences and passages with their mention matrices and the PPR graph's edges.

    Attributes:
        entity_names: [E] entity surface forms (case kept).
        sentences: [S] sentence texts.
        entity_sentence: sparse COO [E, S], 1.0 where the entity is named in the sentence.
        sentence_passage: sparse COO [S, P], 1.0 where the sentence occurs in the passage.
        passage_entity: LongTensor [2, M] (passage, entity) pairs with weights ``passage_entity_weight`` [M]
            (``count / Σ counts`` in the passage).
        adjacent: LongTensor [2, P-1] consecutive passage pairs (empty unless built with ``adjacent=True``).
        num_passages: P.
    """

    entity_names: list[str]
    sentences: list[str]
    entity_sentence: torch.Tensor
    sentence_passage: torch.Tensor
    passage_entity: torch.Tensor
    passage_entity_weight: torch.Tensor
    adjacent: torch.Tensor
    num_passages: int

    @property
    def num_entities(self) -> int:
        return len(self.entity_names)

    @property
    def num_sentences(self) -> int:
        return len(self.sentences)

    @property
    def num_nodes(self) -> int:
        """PPR nodes: the entities (ids ``0..E-1``), then the passages (``E..E+P-1``)."""
        return self.num_entities + self.num_passages

    def ppr_edges(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The undirected PPR graph's edges in node ids: (edge_index [2, M'], weight [M'])."""
        e = self.num_entities
        pe = torch.stack([self.passage_entity[0] + e, self.passage_entity[1]])
        adj = self.adjacent + e
        return (torch.cat([pe, adj], dim=1),
                torch.cat([self.passage_entity_weight, torch.ones(adj.shape[1], dtype=torch.float64)]))

    @property
    def stats(self) -> dict[str, int]:
        return {"entities": self.num_entities, "sentences": self.num_sentences, "passages": self.num_passages,
                "mentions": int(self.entity_sentence._nnz()), "passage_entity_edges": int(self.passage_entity.shape[1]),
                "adjacent_edges": int(self.adjacent.shape[1])}


def build_trigraph(texts: Sequence[str], mentions: Sequence[PassageMentions], adjacent: bool) -> TriGraph:
    """Assemble the Tri-Graph of passages ``texts`` from their NER records.

    Args:
        texts: [P] passage texts (what the entity counts are taken in).
        mentions: [P] their :class:`PassageMentions`.
        adjacent: link consecutive passages (weight 1), as the authors' ``add_adjacent_passage_edges``.
    """
    entity_id: dict[str, int] = {}
    sentence_id: dict[str, int] = {}
    es: set[tuple[int, int]] = set()
    sp: set[tuple[int, int]] = set()
    pe_pairs: list[tuple[int, int]] = []
    pe_weight: list[float] = []
    for p, (text, m) in enumerate(zip(texts, mentions)):
        for sent, ents in m.sentences:
            s = sentence_id.setdefault(sent, len(sentence_id))
            sp.add((s, p))
            for name in ents:
                es.add((entity_id.setdefault(name, len(entity_id)), s))
        counts = [(entity_id[name], text.count(name)) for name in m.entities]
        total = sum(c for _, c in counts)
        for ent, c in counts:
            if c > 0:  # the authors keep a zero-weight edge (no effect on PPR) and divide by zero on an empty total
                pe_pairs.append((p, ent))
                pe_weight.append(c / total)
    num_e, num_s, num_p = len(entity_id), len(sentence_id), len(texts)

    def coo(pairs: set[tuple[int, int]], shape: tuple[int, int]) -> torch.Tensor:
        idx = torch.tensor(sorted(pairs), dtype=torch.long).reshape(-1, 2).T
        return torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1]), shape, check_invariants=False).coalesce()

    adj = (torch.stack([torch.arange(num_p - 1), torch.arange(1, num_p)]) if adjacent and num_p > 1
           else torch.zeros(2, 0, dtype=torch.long))
    return TriGraph(list(entity_id), list(sentence_id), coo(es, (num_e, num_s)), coo(sp, (num_s, num_p)),
                    torch.tensor(pe_pairs, dtype=torch.long).reshape(-1, 2).T,
                    torch.tensor(pe_weight, dtype=torch.float64), adj, num_p)


__all__ = ["EXCLUDED_LABELS", "MentionStore", "PassageMentions", "TriGraph", "build_trigraph", "entity_labels",
           "mention_store_path", "parse_mentions", "question_entities", "with_title_mentions"]
