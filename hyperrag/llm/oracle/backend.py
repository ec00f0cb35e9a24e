"""``llm=oracle``: a gold-informed backend that answers LLM tasks the way a perfect model would.

An upper-bound analysis and a wiring check, never a model's result: every figure from it is labelled
``upper bound (oracle)``. It goes through the same task interface as a real model — the task builds its
messages, the oracle writes the reply a perfect model would give (:mod:`hyperrag.llm.oracle.answers`), and the
task's own parser validates it and checks its IDs against the ones shown; accounting and the response cache
(under the oracle's own model key, which includes a hash of the gold) are the real ones. If a method's LLM
output never reaches its ranking, its oracle run equals its LLM-free run.

The gold comes from the query file in use: :meth:`OracleLLM.bind_gold` (``retrieve.py`` binds the dataset it
retrieves). Tasks without gold fail like a failed call (``error_kind = "no_gold"``) so the method takes its
documented fallback.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import asynccontextmanager
from typing import Any

from typing_extensions import Self

from hyperrag.data.types import Dataset
from hyperrag.llm.accounting import approx_tokens
from hyperrag.llm.base import LLM
from hyperrag.llm.errors import LLMUnavailableError, OutputInvalid
from hyperrag.llm.oracle.answers import ORIGIN, NoGold, oracle_reply
from hyperrag.llm.oracle.gold import GoldIndex
from hyperrag.llm.session import Prepared, Session
from hyperrag.llm.tasks.base import Task
from hyperrag.llm.types import ErrorKind, TaskResult
from hyperrag.utils.hashing import stable_digest

ORACLE_LABEL = "upper bound (oracle)"


def oracle_revision() -> str:
    """A digest of the oracle's answering code (:mod:`~hyperrag.llm.oracle.answers` and ``gold``)."""
    import inspect

    from hyperrag.llm.oracle import answers, gold
    from hyperrag.utils.hashing import stable_digest

    return stable_digest(inspect.getsource(answers), inspect.getsource(gold), length=8)


class _NoTransport:
    """Stands where a session's HTTP client would: the oracle sends nothing."""

    def __init__(self, model: str) -> None:
        self.model = model

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


class OracleSession(Session):
    """A session whose replies come from the gold annotations instead of a model."""

    def __init__(self, gold: GoldIndex, refinement: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gold = gold
        self.refinement = refinement

    def prepare(self, task: Task, inputs: Mapping[str, Any]) -> Prepared:
        """As every session's, with the call's :data:`~hyperrag.llm.oracle.answers.ORIGIN` in the cache key: it is
        not in the messages, but the oracle's reply depends on it (one rewrite may descend from two questions)."""
        p = super().prepare(task, inputs)
        if inputs.get(ORIGIN) is not None:
            p.key = stable_digest(p.key, ORIGIN, str(inputs[ORIGIN]))
        return p

    async def _ask(self, p: Prepared) -> TaskResult:
        task = p.task
        res = TaskResult(task.label, False, prompt_tokens=sum(approx_tokens(m["content"]) for m in p.messages))
        try:
            raw = task.reply_text(oracle_reply(task, p.inputs, self.gold, refinement=self.refinement))
        except NoGold as err:
            res.error_kind, res.error = ErrorKind.NO_GOLD, str(err)
            return res
        res.raw, res.parse_attempts, res.completion_tokens = raw, 1, approx_tokens(raw)
        try:
            parsed = task.parse(raw, p.inputs)
        except OutputInvalid as err:  # an oracle reply the task's schema rejects is an oracle bug: say so
            res.error_kind, res.error = ErrorKind.INVALID_OUTPUT, f"oracle reply rejected: {err}"
            return res
        res.ok, res.output, res.value = True, parsed.output, parsed.value
        res.dropped_ids, res.repaired = parsed.dropped_ids, parsed.repaired
        if self.cache is not None:
            self.cache.put(p.key, task=task.key, model=self.client.model, raw=raw,
                           prompt_tokens=res.prompt_tokens, completion_tokens=res.completion_tokens)
        return res


class OracleLLM(LLM):
    """The gold-informed backend (``llm=oracle``).

    Args:
        refinement: the reading of CDF-RAG's refinement actions (``no_answers``: no gold answer in any rewrite;
            ``gold_answers``: every action may use the hops' gold answers — :func:`~hyperrag.llm.oracle.answers.
            refinement_queries`); part of the cache key.
        cache_path / show_usage / max_invalid_retries: as for every :class:`~hyperrag.llm.base.LLM`.
    """

    kind = "oracle"
    label = ORACLE_LABEL
    requires_gold = True
    #: tasks without gold fail on purpose: a stage whose every call fails takes its fallback instead of stopping
    fails_by_design = True
    sends_requests = False

    def __init__(self, *, refinement: str, **kwargs: Any) -> None:
        from hyperrag.llm.oracle.answers import REFINEMENT_READINGS

        if refinement not in REFINEMENT_READINGS:
            raise ValueError(f"llm/oracle.yaml refinement: expected one of {REFINEMENT_READINGS}, got {refinement!r}")
        kwargs.pop("structured_output", None)
        super().__init__(model="oracle", base_url="oracle://gold", structured_output="none", **kwargs)
        self.refinement = refinement
        self.gold: GoldIndex | None = None

    def bind_gold(self, dataset: Dataset) -> OracleLLM:
        """Answer from ``dataset``'s gold annotations (its queries, gold passages, decompositions, answers)."""
        self.gold = GoldIndex(dataset)
        # the cache key names the gold and the oracle's own code: an edited oracle never serves stale replies
        self.model = f"oracle-{dataset.name}-{self.gold.digest}-{oracle_revision()}-{self.refinement}"
        return self

    def start(self) -> LLM:
        if self.gold is None:
            raise LLMUnavailableError("llm=oracle answers from a query file's gold annotations; bind a dataset "
                                      "first (retrieve.py does)")
        self._started = True
        return self

    def _first_model(self) -> str:
        return self.model or "oracle"

    @asynccontextmanager
    async def session(self):  # type: ignore[no-untyped-def]
        self.start()
        assert self.gold is not None
        async with OracleSession(self.gold, self.refinement, client=_NoTransport(self.model or "oracle"),  # type: ignore[arg-type]
                                 mode=self.structured_output, sampling=self.sampling, cache=self.cache,
                                 accounting=self.accounting, max_invalid_retries=0) as s:
            yield s

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "label": ORACLE_LABEL, "gold_queries": len(self.gold) if self.gold else 0,
                "refinement": self.refinement}
