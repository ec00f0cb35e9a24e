"""HippoRAG 2 recognition memory for retrievers: filter each query's candidate facts with the LLM.

Batch helper for sync retriever code. For every query it returns the caller keys of the facts the
model judged relevant (most relevant first, at most ``max_facts``), or ``None`` when no judgement
is available — ``llm=none``, or the call failed after all retries — so the retriever falls back to
its LLM-free path (keep the embedding top-k facts). An empty list is a real answer: the model saw
the facts and kept none (HippoRAG 2 then falls back to dense passage ranking for that query).

    kept = filter_facts(llm, questions, [[(fact_id, (s, r, o)), ...] for each query], max_facts=5, asked=4)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperrag.llm.tasks.fact_filter import FactFilter

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)


def filter_facts(
    llm: LanguageModel,
    queries: Sequence[str],
    candidates: Sequence[Sequence[Any]],
    *,
    max_facts: int | None = 5,
    asked: int | None = 4,
    progress: bool | str = False,
) -> list[list[Any] | None]:
    """Relevant fact keys per query (``None`` = no LLM judgement: the caller decides, e.g. HippoRAG 2's
    ``failed_filter`` — ``dense_fallback``, the reference's, keeps no fact; ``keep_all`` keeps every candidate).

    Args:
        llm: an :class:`~hyperrag.llm.base.LLM` (``NoLLM`` gives all ``None`` without raising).
        queries: one question per query.
        candidates: per query, its candidate facts as ``(key, (s, r, o))`` pairs, or plain triples
            (then keys are positions in that query's list).
        max_facts: cap on kept facts per query (HippoRAG 2's code keeps up to 5).
        asked: how many facts the prompt asks for at most (HippoRAG 2's released prompt: up to 4).
    """
    if len(queries) != len(candidates):
        raise ValueError(f"{len(queries)} queries but {len(candidates)} candidate lists")
    if not getattr(llm, "available", False):
        return [None] * len(queries)
    out: list[list[Any] | None] = [None] * len(queries)
    todo = [i for i, c in enumerate(candidates) if len(c) > 0]
    for i, c in enumerate(candidates):
        if len(c) == 0:
            out[i] = []
    if not todo:
        return out
    task = FactFilter(max_facts=max_facts, asked=asked)
    results = llm.complete_structured_batch(
        task, [{"query": queries[i], "facts": list(candidates[i])} for i in todo], progress=progress)
    failed = 0
    for i, res in zip(todo, results):
        if res.ok:
            out[i] = list(res.value)
        else:
            failed += 1
    if failed:
        log.warning("fact filter: %d/%d queries without an LLM judgement (their facts go by the retriever's "
                    "failed_filter setting)", failed, len(todo))
    return out
