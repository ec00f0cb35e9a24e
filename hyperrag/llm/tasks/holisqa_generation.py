"""HolisQA generation: from a slice of numbered sentences, write question–answer pairs whose answer needs
at least ``min_sentences`` of them together, citing the sentence IDs (checked against those shown).

HugRAG's holistic-comprehension benchmark: questions that cannot be answered from any single sentence, so
a retriever must bring back the whole supporting context. Cited IDs the prompt never showed are dropped
here; the builder (:mod:`hyperrag.holisqa`) rejects pairs citing fewer than ``min_sentences`` sentences and
runs the necessity check (``holisqa_necessity``) on the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from hyperrag.llm.prompting import key_map, make_items, render_items
from hyperrag.llm.tasks.base import IdList, Task, Text, filter_ids

SCHEMA_VERSION = "1"


def sentences_of(inputs: Mapping[str, Any]) -> list[Any]:
    """The numbered sentences: ``inputs["sentences"]`` (``passages`` is accepted as an alias)."""
    if "sentences" not in inputs and "passages" not in inputs:
        raise ValueError(f"holisqa tasks need 'sentences'; got {sorted(inputs)}")
    return list(inputs["sentences"] if "sentences" in inputs else inputs["passages"])


class QAPair(BaseModel):
    question: Text
    answer: Text
    sentence_ids: IdList


class QAPairs(BaseModel):
    pairs: list[QAPair] = Field(max_length=10)


class HolisQAGeneration(Task):
    """Inputs: ``sentences`` (``(key, text)`` pairs or mappings with id/text); optional ``n_pairs`` (2) and
    ``min_sentences`` (3). ``value``: ``[{"question", "answer", "sentence_ids": [caller keys]}]``."""

    name = "holisqa_generation"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = QAPairs
    max_tokens = 1024
    ROLE = (
        "You write hard reading-comprehension questions over a passage given as numbered sentences. Each "
        "question must need several sentences together: its answer can only be worked out by combining the "
        "facts of all the sentences it cites, and no single sentence (nor any smaller subset) is enough. "
        "Answers are short (an entity, number, date or phrase). Cite exactly the sentences needed by ID. Use "
        "only what the sentences say."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(sentences_of(inputs), "S")

    def user(self, inputs: Mapping[str, Any]) -> str:
        n, k = int(inputs.get("n_pairs", 2)), int(inputs.get("min_sentences", 3))
        return (f"Sentences:\n{render_items(self.items(inputs), 'item')}\n"
                f"Write up to {n} question-answer pairs, each needing at least {k} of the sentences. Reply with "
                '{"pairs": [{"question": "...", "answer": "...", "sentence_ids": ["S..", ...]}, ...]}.')

    def check(self, output: BaseModel, inputs: Mapping[str, Any]) -> tuple[BaseModel, int]:
        shown = [it.id for it in self.items(inputs)]
        kept, dropped = [], 0
        for pair in output.pairs:  # type: ignore[attr-defined]
            ids, bad = filter_ids(pair.sentence_ids, shown)
            dropped += bad
            if pair.question and pair.answer:
                kept.append(QAPair(question=pair.question, answer=pair.answer, sentence_ids=ids))
        return QAPairs(pairs=kept), dropped

    def interpret(self, output: BaseModel, inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        keys = key_map(self.items(inputs))
        return [{"question": p.question, "answer": p.answer, "sentence_ids": [keys[i] for i in p.sentence_ids]}
                for p in output.pairs]  # type: ignore[attr-defined]
