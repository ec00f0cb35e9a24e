"""HolisQA-style dataset builder (HugRAG's holistic-comprehension benchmark), for any corpus.

1. The corpus is split into sentences with stable IDs (``<passage id>#s<j>``) and cut into contiguous
   slices of ``slice_sentences`` sentences inside one passage each (stride ``stride``; at most ``max_slices``,
   sampled with ``seed``).
2. Per slice the LLM writes question–answer pairs that need the slice as a whole (HugRAG F.2, Fig 14): answers of
   2–4 sentences, citing ``min_sentences``–``max_sentences`` sentence IDs (task ``holisqa_generation``; IDs it was
   never shown are dropped); a pair citing too few or too many sentences, or whose answer is not 2–4 sentences
   (a short entity answer), is rejected.
3. Necessity check (task ``holisqa_necessity``): with all cited sentences the LLM must derive the answer
   (positive control); with any one cited sentence left out it must no longer derive it. ``necessity_context``
   says what stays in that second test: the other cited sentences (``cited``) or the whole slice minus the
   left-out sentence (``slice``, stricter: no other sentence may substitute for it). "Derived" means the
   judge says answerable and its answer matches the pair's answer (token F1 ≥ ``answer_match``).
4. Surviving pairs are written in the project's query format — ``id``, ``question``, ``answers``,
   ``gold_ids`` (passages of the cited sentences) — plus ``gold_sentences`` (``id``, ``passage_id``,
   ``text``), so ``evaluate.py`` measures sentence-level context recall.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hyperrag.config.validation import PositiveInt, Probability, settings
from hyperrag.data.types import Corpus
from hyperrag.eval.qa import token_f1
from hyperrag.utils.sentences import split_sentences

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Sentence:
    id: str
    passage_id: str
    text: str


@dataclass
class BuildResult:
    queries: list[dict[str, Any]]
    rejected: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)


def corpus_sentences(corpus: Corpus) -> list[Sentence]:
    """Every sentence of the corpus in corpus order, with IDs ``<passage id>#s<j>`` (j from 0 per passage)."""
    out = []
    for p in corpus.passages:
        for j, s in enumerate(split_sentences(p.text)):
            out.append(Sentence(f"{p.id}#s{j}", p.id, s))
    return out


def make_slices(sentences: Sequence[Sentence], size: int, stride: int | None = None, max_slices: int | None = None,
                seed: int = 0, within_passage: bool = True) -> list[list[Sentence]]:
    """Contiguous windows of ``size`` sentences every ``stride`` (default ``size``: no overlap), each inside one
    passage (HugRAG F.2: a slice is contiguous text of one paper, self-contained; a window never joins the end of
    one passage to the start of the next); a passage shorter than ``size`` is one slice of all its sentences.
    ``within_passage=False``: windows over the whole corpus's sentence sequence (the earlier rule). A random subset
    of ``max_slices`` (seeded, kept in corpus order) when there are more."""
    if size < 1:
        raise ValueError("slice size must be >= 1")
    stride = stride or size
    runs: list[list[Sentence]] = []
    for s in sentences:  # sentences come in corpus order: one run per passage (or one run in all)
        if runs and (runs[-1][0].passage_id == s.passage_id or not within_passage):
            runs[-1].append(s)
        else:
            runs.append([s])
    slices = [run[start:start + size] for run in runs
              for start in range(0, max(len(run) - size, 0) + 1, stride)]
    if max_slices is not None and len(slices) > max_slices:
        keep = sorted(random.Random(seed).sample(range(len(slices)), max_slices))
        slices = [slices[i] for i in keep]
    return slices


@settings
class HolisQASettings:
    """``builder`` of ``hydra_configs/holisqa.yaml``, the values' only source (by hand: :func:`holisqa_settings`).

    Attributes:
        slice_sentences: contiguous sentences shown per generation call; ``stride`` between slices (``None``: no
            overlap); ``max_slices``: a seeded random subset of the slices (``None``: all).
        slice_scope: ``passage`` (every slice inside one passage, HugRAG F.2) or ``corpus`` (windows may run
            across passage boundaries: the earlier rule).
        pairs_per_slice: question–answer pairs asked per slice.
        min_sentences / max_sentences: sentences a pair must cite.
        answer_sentences: ``(low, high)`` sentences an answer must have.
        necessity_context: ``cited`` or ``slice`` — what stays in the leave-one-out test.
        answer_match: token F1 at which the judge's answer counts as the pair's answer.
        seed: slice sampling.
        id_prefix: query ids are ``<id_prefix>-00000``...
    """

    slice_sentences: PositiveInt
    slice_scope: Literal["passage", "corpus"]
    stride: PositiveInt | None
    max_slices: PositiveInt | None
    pairs_per_slice: PositiveInt
    min_sentences: PositiveInt
    max_sentences: PositiveInt
    answer_sentences: tuple[PositiveInt, PositiveInt]
    necessity_context: Literal["cited", "slice"]
    answer_match: Probability
    seed: int
    id_prefix: str


def holisqa_settings(**overrides: Any) -> HolisQASettings:
    """``holisqa.yaml``'s ``builder`` settings (``data=sample``) with ``overrides``, for a builder made by hand."""
    from hyperrag.config.compose import configured

    return configured("builder", HolisQASettings, config="holisqa", **overrides)


class HolisQABuilder:
    """Build HolisQA-style queries from a corpus with an LLM. See the module docstring for the steps.

    Args:
        llm: writes and judges the pairs.
        settings: :class:`HolisQASettings`.
    """

    def __init__(self, llm: LanguageModel, settings: HolisQASettings) -> None:
        self.llm = llm
        self.settings = settings

    def derived(self, res: Any, answer: str) -> bool | None:
        """Did the judge derive ``answer``? ``None`` when the call failed."""
        if not res.ok:
            return None
        return bool(res.value["answerable"]) and token_f1(res.value["answer"], [answer]) >= self.settings.answer_match

    def build(self, corpus: Corpus) -> BuildResult:
        st = self.settings
        sentences = corpus_sentences(corpus)
        slices = make_slices(sentences, st.slice_sentences, st.stride, st.max_slices, st.seed,
                             within_passage=st.slice_scope == "passage")
        gen = self.llm.complete_structured_batch(
            "holisqa_generation", [{"sentences": [(s.id, s.text) for s in sl], "n_pairs": st.pairs_per_slice,
                                    "min_sentences": st.min_sentences, "max_sentences": st.max_sentences}
                                   for sl in slices], progress="holisqa pairs")
        rejected: list[dict[str, Any]] = []
        candidates: list[tuple[list[Sentence], dict[str, Any]]] = []
        for sl, res in zip(slices, gen):
            if not res.ok:
                rejected.append({"slice": [s.id for s in sl], "code": "generation_failed",
                                 "reason": f"generation failed ({res.error_kind})"})
                continue
            for pair in res.value:
                cited = [s for s in sl if s.id in set(pair["sentence_ids"])]  # slice order, deduplicated
                length = len(split_sentences(pair["answer"]))
                low, high = st.answer_sentences
                if len(cited) < st.min_sentences:
                    rejected.append({**pair, "code": "too_few_citations",
                                     "reason": f"cites {len(cited)} < {st.min_sentences} sentences"})
                elif len(cited) > st.max_sentences:
                    rejected.append({**pair, "code": "too_many_citations",
                                     "reason": f"cites {len(cited)} > {st.max_sentences} sentences"})
                elif not low <= length <= high:
                    rejected.append({**pair, "code": "answer_length",
                                     "reason": f"answer has {length} sentences, not {low}-{high}"})
                else:
                    candidates.append((sl, {**pair, "sentence_ids": [s.id for s in cited]}))
        # necessity: one positive control + one leave-one-out test per cited sentence, all in one batch
        calls: list[dict[str, Any]] = []
        spans: list[tuple[int, int]] = []
        for sl, pair in candidates:
            cited = [s for s in sl if s.id in pair["sentence_ids"]]
            pool = cited if st.necessity_context == "cited" else sl
            start = len(calls)
            calls.append({"question": pair["question"], "sentences": [(s.id, s.text) for s in cited]})
            for drop in cited:
                calls.append({"question": pair["question"],
                              "sentences": [(s.id, s.text) for s in pool if s.id != drop.id]})
            spans.append((start, len(calls)))
        judged = self.llm.complete_structured_batch("holisqa_necessity", calls, progress="necessity") if calls else []
        queries: list[dict[str, Any]] = []
        for (sl, pair), (a, b) in zip(candidates, spans):
            full, drops = self.derived(judged[a], pair["answer"]), [self.derived(r, pair["answer"]) for r in judged[a + 1:b]]
            if full is None or None in drops:
                rejected.append({**pair, "code": "judge_failed", "reason": "necessity judge failed"})
            elif not full:
                rejected.append({**pair, "code": "not_derivable", "reason": "answer not derivable from its cited sentences"})
            elif any(drops):
                spare = [sid for sid, d in zip(pair["sentence_ids"], drops) if d]
                rejected.append({**pair, "code": "not_necessary", "reason": f"not necessary: {spare}"})
            else:
                queries.append(self.record(len(queries), sl, pair))
        stats = {"passages": len(corpus), "sentences": len(sentences), "slices": len(slices),
                 "pairs_generated": len(candidates) + sum(r["code"] in ("too_few_citations", "too_many_citations",
                                                                         "answer_length") for r in rejected),
                 "pairs_with_enough_citations": len(candidates), "pairs_kept": len(queries),
                 "necessity_calls": len(calls),
                 "rejected_by_reason": _count(r["code"] for r in rejected)}
        return BuildResult(queries, rejected, stats)

    def record(self, n: int, sl: list[Sentence], pair: dict[str, Any]) -> dict[str, Any]:
        cited = [s for s in sl if s.id in pair["sentence_ids"]]
        return {"id": f"{self.settings.id_prefix}-{n:05d}", "question": pair["question"], "answers": [pair["answer"]],
                "gold_ids": list(dict.fromkeys(s.passage_id for s in cited)),
                "gold_sentence_ids": [s.id for s in cited],
                "gold_sentences": [asdict(s) for s in cited],
                "slice": [sl[0].id, sl[-1].id]}


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return out


def write_dataset(result: BuildResult, corpus: Corpus, out_dir: str | Path, settings: dict[str, Any]) -> Path:
    """``queries.jsonl`` + ``corpus.jsonl`` (so ``data=jsonl`` reads them), ``rejected.jsonl``, ``build.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("queries.jsonl", result.queries), ("rejected.jsonl", result.rejected),
                       ("corpus.jsonl", [{"id": p.id, "title": p.title, "text": p.text} for p in corpus.passages])):
        with (out / name).open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / "build.json").write_text(json.dumps({"source": corpus.source, "settings": settings, **result.stats},
                                               indent=1, default=str))
    return out / "queries.jsonl"
