"""Counting what the LLM layer did: requests, cache hits, tokens, failures and wall time per task.

Wall time per task is the union of the intervals during which at least one call of that task was
in flight, so many concurrent calls are not double counted. :meth:`Accounting.table` renders a rich
table for the end of a run; :class:`Estimate` is the dry-run forecast made before a large job.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from hyperrag.llm.types import TaskResult

log = logging.getLogger(__name__)


@dataclass
class TaskStats:
    calls: int = 0
    ok: int = 0
    failed: int = 0
    cache_hits: int = 0
    requests: int = 0
    repair_rounds: int = 0
    repaired_json: int = 0
    dropped_ids: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # what the replies served from the cache cost when they were made
    cached_completion_tokens: int = 0
    wall_s: float = 0.0
    failures: Counter = field(default_factory=Counter)

    def combined(self, other: TaskStats, sign: int = 1) -> TaskStats:
        """``self + other`` (``sign=1``) or ``self - other`` (``sign=-1``), field by field."""
        out = TaskStats(failures=Counter(self.failures))
        for f in fields(self):
            if f.name != "failures":
                setattr(out, f.name, getattr(self, f.name) + sign * getattr(other, f.name))
        if sign > 0:
            out.failures.update(other.failures)
        else:
            out.failures.subtract(other.failures)
            out.failures = +out.failures  # drop the zeros
        return out


def stats_since(after: dict[str, TaskStats], before: dict[str, TaskStats]) -> dict[str, TaskStats]:
    """Per-task counters of what happened between two :meth:`Accounting.snapshot` calls (tasks without a call
    in between left out)."""
    out = {t: s.combined(before[t], -1) if t in before else s for t, s in after.items()}
    return {t: s for t, s in out.items() if s.calls}


class Accounting:
    """Thread-safe per-task counters, fed by the LLM session after every call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.tasks: dict[str, TaskStats] = {}
        self._active: Counter = Counter()
        self._since: dict[str, float] = {}

    def _stats(self, task: str) -> TaskStats:
        if task not in self.tasks:
            self.tasks[task] = TaskStats()
        return self.tasks[task]

    def begin(self, task: str) -> None:
        with self._lock:
            if self._active[task] == 0:
                self._since[task] = time.perf_counter()
            self._active[task] += 1

    def end(self, task: str) -> None:
        with self._lock:
            self._active[task] -= 1
            if self._active[task] == 0:
                self._stats(task).wall_s += time.perf_counter() - self._since.pop(task)

    def record(self, result: TaskResult) -> None:
        with self._lock:
            s = self._stats(result.task)
            s.calls += 1
            s.requests += result.requests
            s.prompt_tokens += result.prompt_tokens
            s.completion_tokens += result.completion_tokens
            s.cached_prompt_tokens += result.cached_prompt_tokens
            s.cached_completion_tokens += result.cached_completion_tokens
            s.dropped_ids += result.dropped_ids
            s.repair_rounds += max(0, result.parse_attempts - 1)
            s.repaired_json += int(result.repaired)
            if result.cached:
                s.cache_hits += 1
            if result.ok:
                s.ok += 1
            else:
                s.failed += 1
                s.failures[result.error_kind or "unknown"] += 1

    def total(self) -> TaskStats:
        with self._lock:
            tot = TaskStats()
            for s in self.tasks.values():
                tot = tot.combined(s)
            return tot

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            out = {t: {**asdict(s), "failures": dict(s.failures)} for t, s in self.tasks.items()}
        tot = self.total()
        out["total"] = {**asdict(tot), "failures": dict(tot.failures)}
        return out

    def snapshot(self) -> dict[str, TaskStats]:
        """A copy of the per-task counters (plain data: it can be sent to another process)."""
        with self._lock:
            return {t: replace(s, failures=Counter(s.failures)) for t, s in self.tasks.items()}

    def merge(self, tasks: dict[str, TaskStats]) -> None:
        """Add counters that another process took (e.g. :func:`stats_since` of a DDP rank); ``wall_s`` then sums
        the processes' wall times, which ran side by side."""
        with self._lock:
            for t, s in tasks.items():
                self.tasks[t] = self._stats(t).combined(s)

    def reset(self) -> None:
        with self._lock:
            self.tasks.clear()

    def table(self, title: str = "LLM usage") -> Any:
        """A :class:`rich.table.Table` with one row per task and a total row."""
        from rich.table import Table

        table = Table(title=title)
        for col in ("task", "calls", "ok", "failed", "cache hits", "requests", "repairs", "dropped IDs",
                    "prompt tok", "completion tok", "wall s", "tok/s"):
            table.add_column(col, justify="left" if col == "task" else "right")
        rows = sorted(self.tasks.items()) + [("total", self.total())]
        for name, s in rows:
            tps = s.completion_tokens / s.wall_s if s.wall_s > 0 else 0.0
            fail = str(s.failed) + (f" ({', '.join(f'{k}:{v}' for k, v in s.failures.items())})" if s.failed else "")
            table.add_row(name, str(s.calls), str(s.ok), fail, str(s.cache_hits), str(s.requests),
                          str(s.repair_rounds), str(s.dropped_ids), f"{s.prompt_tokens:,}", f"{s.completion_tokens:,}",
                          f"{s.wall_s:.1f}", f"{tps:.1f}")
        return table

    def print(self, console: Any = None, title: str = "LLM usage") -> None:
        from rich.console import Console

        if console is None:
            console = Console(stderr=True)
            if not console.is_terminal:
                console = Console(stderr=True, width=160)
        console.print(self.table(title))

    def log_summary(self) -> None:
        for name, s in sorted(self.tasks.items()):
            log.info("llm %s: %d calls, %d ok, %d failed %s, %d cache hits, %d requests, %d+%d tokens, %.1fs",
                     name, s.calls, s.ok, s.failed, dict(s.failures), s.cache_hits, s.requests, s.prompt_tokens,
                     s.completion_tokens, s.wall_s)


def approx_tokens(text: str) -> int:
    """Rough token count (≈ 4 characters per token for English BPE vocabularies)."""
    return max(1, (len(text) + 3) // 4)


@dataclass
class Estimate:
    """Dry-run forecast of a job: what would be sent, before anything is."""

    task: str
    calls: int
    cached: int
    requests: int
    prompt_tokens: int
    completion_tokens_max: int

    def __str__(self) -> str:
        return (f"{self.task}: {self.calls} calls, {self.cached} cached → {self.requests} requests, "
                f"≈{self.prompt_tokens:,} prompt tokens, ≤{self.completion_tokens_max:,} completion tokens")
