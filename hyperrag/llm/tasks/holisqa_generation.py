"""HolisQA generation (HugRAG F.2, Fig 14): from a slice of numbered sentences, write question–answer pairs that
need the slice understood as a whole — answers of 2–4 sentences citing ``min_sentences``–``max_sentences``
sentence IDs (checked against those shown); no short factual, named-entity trivia or single-sentence questions.

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

SCHEMA_VERSION = "2"


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
    """Inputs: ``sentences`` (``(key, text)`` pairs or mappings with id/text); optional ``n_pairs`` (2),
    ``min_sentences`` (3) and ``max_sentences`` (6). ``value``: ``[{"question", "answer", "sentence_ids": [caller
    keys]}]``."""

    name = "holisqa_generation"
    SCHEMA_VERSION = SCHEMA_VERSION
    Output = QAPairs
    max_tokens = 1024
    ROLE = (
        "You build a reading-comprehension dataset from a slice of a long document given as numbered sentences. "
        "Write questions that can only be answered by reasoning over several sentences and by understanding "
        "the slice as a whole (how a problem, a method and a result connect, what follows from what). Do not "
        "write short factual questions, trivia about a named entity, or questions one sentence answers. Each "
        "answer is 2 to 4 sentences long and uses only what the slice says. Cite by ID every sentence the "
        "answer needs, and only sentences of this slice."
    )

    def items(self, inputs: Mapping[str, Any]):  # type: ignore[no-untyped-def]
        return make_items(sentences_of(inputs), "S")

    def user(self, inputs: Mapping[str, Any]) -> str:
        n, k = int(inputs.get("n_pairs", 2)), int(inputs.get("min_sentences", 3))
        top = int(inputs.get("max_sentences", 6))
        return (f"Sentences:\n{render_items(self.items(inputs), 'item')}\n"
                f"Write up to {n} question-answer pairs. Each answer has 2-4 sentences; each pair cites {k} to {top} "
                'sentence IDs. Reply with {"pairs": [{"question": "...", "answer": "...", '
                '"sentence_ids": ["S..", ...]}, ...]}.')

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
