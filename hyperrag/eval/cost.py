"""What a run cost, per phase and per LLM backend, as flat numeric keys of ``metrics.json``'s ``metrics``.

Phases: ``index`` (from the run's start — OpenIE extraction, training, the method's ``index()`` — to the first query)
and ``query`` (the batch loop: retrieval and answering). Backends: ``retrieval`` (the LLM the method itself calls:
OpenIE, edge scoring, fact filters, summaries), ``reader`` (the QA reader: a backend of its own, or the retrieval
LLM's ``grounded_answer`` calls when ``reader_llm=same``), and ``judge`` (``evaluate.py``'s LLM metrics, in
``evaluation.json``). Keys, every value a number::

    cost.<phase>.seconds                       wall seconds of the phase
    cost.<phase>.<measure>                     summed over the backends
    cost.<phase>.<backend>.<measure>           one backend (present when that backend is configured)
    cost.query.<...>_per_1k_queries            every query-phase key, per 1,000 queries
    index_bytes                                bytes on disk of the index directories the method reads
    cost.evaluate.[judge.]<measure>[_per_1k_queries]   evaluate.py's judge (:func:`judge_cost`)

Measures: ``llm_calls`` (task calls, cache hits included), ``llm_requests`` (HTTP requests sent), ``cache_hits``,
``prompt_tokens`` / ``completion_tokens`` (of the requests sent), ``cached_prompt_tokens`` /
``cached_completion_tokens`` (what the replies served from the cache cost when they were made: add them for the
cost of an uncached run), ``llm_seconds`` (wall seconds with a call of a task in flight, summed over tasks).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.llm.accounting import Accounting, TaskStats, stats_since

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

PHASES = ("index", "query")
BACKENDS = ("retrieval", "reader", "judge")
#: measure -> the TaskStats field it sums
MEASURES = {"llm_calls": "calls", "llm_requests": "requests", "cache_hits": "cache_hits",
            "prompt_tokens": "prompt_tokens", "completion_tokens": "completion_tokens",
            "cached_prompt_tokens": "cached_prompt_tokens", "cached_completion_tokens": "cached_completion_tokens",
            "llm_seconds": "wall_s"}
#: the reader's task when the reader is the retrieval LLM itself (``hyperrag.generation.reader``)
READER_TASKS = frozenset({"grounded_answer", "hipporag_qa"})
PER_1K = "_per_1k_queries"


@dataclass
class CostMark:
    """The start of a phase: a wall clock and the LLM backends' counters (``Accounting.snapshot``) then.

    Attributes:
        seconds: ``time.perf_counter()`` at the mark.
        llm: the retrieval LLM's counters.
        reader: a reader backend's own counters (empty when the reader is the retrieval LLM).
    """

    seconds: float
    llm: dict[str, TaskStats] = field(default_factory=dict)
    reader: dict[str, TaskStats] = field(default_factory=dict)

    @classmethod
    def now(cls, llm: LanguageModel | None = None, reader: LanguageModel | None = None) -> CostMark:
        """A mark of ``llm`` and (when it is another backend) ``reader`` now."""
        return cls(time.perf_counter(), _snapshot(llm), _snapshot(reader) if reader is not llm else {})


def _snapshot(backend: LanguageModel | None) -> dict[str, TaskStats]:
    accounting = getattr(backend, "accounting", None)
    return accounting.snapshot() if isinstance(accounting, Accounting) else {}


def _reader_task(label: str) -> bool:
    """Whether an accounting row (a task's label, ``name[/variant]``) is the reader's."""
    return label.split("/", 1)[0] in READER_TASKS


def by_backend(llm: Mapping[str, TaskStats], reader: Mapping[str, TaskStats] | None,
               reader_is_llm: bool) -> dict[str, dict[str, TaskStats]]:
    """Per-task counters of one phase split by backend: the retrieval LLM's (less the reader's tasks when the reader
    is that same backend) and the reader's."""
    if reader_is_llm:
        return {"retrieval": {t: s for t, s in llm.items() if not _reader_task(t)},
                "reader": {t: s for t, s in llm.items() if _reader_task(t)}}
    return {"retrieval": dict(llm), "reader": dict(reader or {})}


def measures(tasks: Iterable[TaskStats]) -> dict[str, float]:
    """Every measure summed over ``tasks``."""
    tasks = list(tasks)
    out: dict[str, float] = {}
    for name, attr in MEASURES.items():
        total = sum(getattr(s, attr, 0) for s in tasks)
        out[name] = round(total, 3) if isinstance(total, float) else int(total)
    return out


def phase_keys(phase: str, seconds: float, backends: Mapping[str, Mapping[str, TaskStats]],
               queries: int | None = None) -> dict[str, float]:
    """The flat keys of one phase: ``cost.<phase>.seconds``, totals, per backend; with ``queries`` also each one per
    1,000 queries.

    Args:
        backends: per configured backend (``retrieval``, ``reader``, ``judge``), its per-task counters.
        queries: the queries of the phase (the query phase's normaliser).
    """
    keys: dict[str, float] = {f"cost.{phase}.seconds": round(seconds, 3)}
    keys.update({f"cost.{phase}.{m}": v for m, v in
                 measures(s for tasks in backends.values() for s in tasks.values()).items()})
    for backend, tasks in backends.items():
        keys.update({f"cost.{phase}.{backend}.{m}": v for m, v in measures(tasks.values()).items()})
    if queries:
        keys.update({f"{k}{PER_1K}": round(v * 1000 / queries, 3) for k, v in list(keys.items())})
    return keys


def run_cost(mark: CostMark, loop_start: CostMark, loop_end: CostMark, queries: int, *, has_llm: bool,
             has_reader: bool, reader_is_llm: bool) -> dict[str, float]:
    """The ``cost.index.*`` (``mark`` → ``loop_start``) and ``cost.query.*`` (``loop_start`` → ``loop_end``) keys.

    Args:
        queries: the queries the loop retrieved (the per-1,000 normaliser).
        has_llm / has_reader: which backends are configured (a backend that is not has no keys; the totals are
            written whatever, 0 for an LLM-free run).
        reader_is_llm: the reader is the retrieval LLM (``reader_llm=same``): its tasks are split off by name.
    """
    out: dict[str, float] = {}
    for phase, (a, b) in (("index", (mark, loop_start)), ("query", (loop_start, loop_end))):
        split = by_backend(stats_since(b.llm, a.llm), stats_since(b.reader, a.reader), reader_is_llm)
        kept = {k: v for k, v in split.items() if (k == "retrieval" and has_llm) or (k == "reader" and has_reader)}
        out.update(phase_keys(phase, b.seconds - a.seconds, kept, queries if phase == "query" else None))
    return out


def judge_cost(before: CostMark, after: CostMark, queries: int) -> dict[str, float]:
    """The ``cost.evaluate.*`` keys of one predictions file's evaluation (``evaluate.py``'s LLM judges, backend
    ``judge``): ``before`` / ``after`` are :meth:`CostMark.now` of the judge LLM around it; per 1,000 queries too."""
    return phase_keys("evaluate", after.seconds - before.seconds, {"judge": stats_since(after.llm, before.llm)},
                      queries)


def combine(parts: list[Mapping[str, Any]], queries: int) -> dict[str, float]:
    """The cost keys of several runs over disjoint query sets (cross-fitting folds): counts and seconds summed,
    per-1,000 figures recomputed over ``queries``, ``index_bytes`` the largest."""
    sums: dict[str, float] = {}
    for part in parts:
        for key, value in part.items():
            if key.startswith("cost.") and not key.endswith(PER_1K) and isinstance(value, (int, float)):
                sums[key] = sums.get(key, 0) + value
    out = {k: round(v, 3) if isinstance(v, float) else v for k, v in sums.items()}
    if queries:
        out.update({f"{k}{PER_1K}": round(v * 1000 / queries, 3) for k, v in sums.items() if k.startswith("cost.query.")})
    sizes = [p["index_bytes"] for p in parts if isinstance(p.get("index_bytes"), int)]
    if sizes:
        out["index_bytes"] = max(sizes)
    return out


def directory_bytes(paths: Iterable[str | Path]) -> int:
    """Bytes of the files under ``paths`` (folders or files; nested and repeated paths counted once; the index
    lock's own files left out)."""
    roots = sorted({Path(p).resolve() for p in paths if p and Path(p).exists()}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for root in roots:
        if not any(root.is_relative_to(k) for k in kept):
            kept.append(root)
    total = 0
    for root in kept:
        if root.is_file():
            total += root.stat().st_size
            continue
        for folder, _, files in os.walk(root):
            total += sum((Path(folder) / f).stat().st_size for f in files if not f.startswith(".writer.lock"))
    return total


def index_paths(retriever: Any, info: Mapping[str, Any]) -> list[str]:
    """The index directories a retriever reads: its ``index_dir`` and every ``*_dir`` path of ``info`` (its
    ``describe()``: a knowledge-graph index, a hierarchy, a tree)."""
    paths = [retriever.index_dir] if getattr(retriever, "index_dir", None) else []
    return paths + [v for k, v in info.items() if k.endswith("_dir") and isinstance(v, str)]


def index_bytes(retriever: Any, info: Mapping[str, Any]) -> int | None:
    """Bytes on disk of the retriever's index directories (:func:`index_paths`; ``info``: its ``describe()``);
    ``None`` when it reports none (a method whose only stored state is the shared embedding cache: dense, BM25)."""
    paths = [p for p in index_paths(retriever, info) if Path(p).exists()]
    return directory_bytes(paths) if paths else None


__all__ = ["BACKENDS", "MEASURES", "PHASES", "READER_TASKS", "CostMark", "by_backend", "combine",
           "directory_bytes", "index_bytes", "index_paths", "judge_cost", "measures", "phase_keys", "run_cost"]
