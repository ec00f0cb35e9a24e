"""GraphRAG global search (Edge et al., 2024): map over community reports, reduce the scored points to an answer.

Per query, as GraphRAG's global search does it:
  1. *reports*: every community report at ``community_level`` (by rank), or — ``max_reports`` — only the ones most
     similar to the query (a bound on map calls GraphRAG does not have; ``null`` keeps them all);
  2. *map*: the reports are cut into batches of ``map_context_tokens``; for each batch the LLM lists key points
     that respond to the question, each scored 0–100 and citing its reports (``graphrag_map`` task);
  3. *reduce*: every point scored above 0, highest first, up to ``reduce_context_tokens``, goes to one LLM call
     that writes the answer (``graphrag_reduce``) — ``details["answer"]``; when no point scores above 0 the answer
     is GraphRAG's "I do not know" without a call.

LLM-free stand-in (no LLM, or a map call that failed — counted as skipped ``global_map`` steps): each report of
the batch is one point, its text the report and its score ``round(100 × max(0, cos(query, report)))``; no answer
is written (the reduce is the answer step the batch runner counts).

Passage ranking (GraphRAG ranks no passages): the reports cited by the points, in the reduce's order, each
contributing the passages of its entities by dense similarity; then the rest of the corpus by dense similarity.
Scores are reciprocal ranks.
"""

from __future__ import annotations

from typing import Any

import torch

from hyperrag.data.types import Dataset
from hyperrag.generation.context import take_within
from hyperrag.hierarchy.tokens import approx_tokens
from hyperrag.retrievers.base import RetrievalOutput, complete_ranking, rank_scores
from hyperrag.retrievers.graphrag_index import GraphRAGIndexed
from hyperrag.retrievers.settings import GraphRAGGlobalSettings

NO_DATA_ANSWER = "I do not know."


class GraphRAGGlobalRetriever(GraphRAGIndexed):
    """Args: see :class:`~hyperrag.retrievers.graphrag_index.GraphRAGIndexed`; ``settings``:
    :class:`~hyperrag.retrievers.settings.GraphRAGGlobalSettings`."""

    name = "graphrag_global"
    settings: GraphRAGGlobalSettings
    _report_passages: dict[int, torch.Tensor]

    def index(self, dataset: Dataset) -> None:
        super().index(dataset)
        self._report_passages = {}

    def candidate_reports(self, report_cos: torch.Tensor) -> list[int]:
        """The reports one query maps over: all at the level by rank, or the ``max_reports`` most similar.

        Args:
            report_cos: FloatTensor [M], the query's cosine to every report.
        """
        assert self.reports is not None
        modules = self.reports.at_level(self.settings.community_level)
        if self.settings.max_reports is not None and modules.shape[0] > self.settings.max_reports:
            top = torch.topk(report_cos[modules], self.settings.max_reports).indices
            modules = modules[top]
        return modules.tolist()

    def batches(self, modules: list[int]) -> list[list[int]]:
        """Reports cut into map calls of at most ``map_context_tokens`` tokens (at least one report each)."""
        assert self.reports is not None
        out: list[list[int]] = []
        rest = modules
        while rest:
            n = max(1, take_within([self.reports.texts[m] for m in rest], self.settings.map_context_tokens))
            out.append(rest[:n])
            rest = rest[n:]
        return out

    def stand_in_points(self, batch: list[int], report_cos: torch.Tensor) -> list[dict[str, Any]]:
        assert self.reports is not None
        return [{"description": self.reports.texts[m], "score": round(100 * max(0.0, float(report_cos[m]))),
                 "reports": [f"report:{m}"]} for m in batch]

    def map_points(self, questions: list[str], batches: list[list[list[int]]],
                   report_cos: torch.Tensor) -> list[list[dict[str, Any]]]:
        """Every query's points over all its batches (LLM calls run concurrently; failures → stand-ins)."""
        assert self.reports is not None
        points: list[list[dict[str, Any]]] = [[] for _ in questions]
        calls = [(b, batch) for b, qb in enumerate(batches) for batch in qb]
        results: list[Any] = [None] * len(calls)
        if self.llm_available and calls:
            inputs = [{"question": questions[b], "max_words": self.settings.map_max_words,
                       "reports": [(f"report:{m}", self.reports.texts[m]) for m in batch]} for b, batch in calls]
            results = self.llm.complete_structured_batch("graphrag_map", inputs)
        for (b, batch), res in zip(calls, results):
            if res is not None and res.ok:
                points[b].extend(res.value)
            else:
                self.skip("global_map")
                points[b].extend(self.stand_in_points(batch, report_cos[b]))
        return points

    def reduce_rows(self, points: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Points above 0, highest score first (stable), within ``reduce_context_tokens``."""
        ranked = sorted((p for p in points if p["score"] > 0), key=lambda p: -p["score"])
        texts = [f"Importance: {p['score']}\n{p['description']}" for p in ranked]
        return ranked[: take_within(texts, self.settings.reduce_context_tokens, approx_tokens)]

    def report_passages(self, module: int, dense: torch.Tensor) -> list[int]:
        """The passages mentioning the report's entities, by dense similarity."""
        assert self.reports is not None
        if module not in self._report_passages:
            ents = self.reports.entities(module).tolist()
            self._report_passages[module] = torch.unique(torch.cat(
                [self.incidence.passages(e) for e in ents])) if ents else torch.empty(0, dtype=torch.long)
        passages = self._report_passages[module]
        return passages[torch.argsort(dense[passages], descending=True, stable=True)].tolist()

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        q = self.encode(questions)
        report_cos = (q @ self.report_emb.T).cpu()
        dense = (q @ self.passage_emb.T).cpu()
        batches = [self.batches(self.candidate_reports(report_cos[b])) for b in range(len(questions))]
        points = self.map_points(questions, batches, report_cos)
        kept = [self.reduce_rows(p) for p in points]
        rankings, details = [], []
        for b, rows in enumerate(kept):
            order: list[int] = []
            for key in dict.fromkeys(k for p in rows for k in p["reports"]):
                if len(set(order)) >= top_k:
                    break
                order.extend(self.report_passages(int(key.split(":")[1]), dense[b]))
            rankings.append(complete_ranking(order, dense[b], top_k))
            details.append({"map_calls": len(batches[b]), "reports_mapped": sum(len(x) for x in batches[b]),
                            "points": len(points[b]), "points_reduced": len(rows),
                            "top_points": [[p["score"], p["description"][:120], p["reports"][:5]] for p in rows[:5]]})
        if self.llm_available:
            self.reduce(questions, kept, details)
        idx = torch.tensor(rankings, dtype=torch.long).reshape(len(questions), -1)
        return RetrievalOutput(idx, rank_scores(idx), details)

    def reduce(self, questions: list[str], kept: list[list[dict[str, Any]]], details: list[dict[str, Any]]) -> None:
        """The answer of each query from its reduced points (``NO_DATA_ANSWER`` when none scored above 0)."""
        s = self.settings
        todo = [b for b, rows in enumerate(kept) if rows]
        for b, rows in enumerate(kept):
            if not rows:
                details[b].update({"answer": NO_DATA_ANSWER, "answer_ok": True, "supporting_rows": []})
        inputs = [{"question": questions[b], "response_type": s.response_type, "max_words": s.reduce_max_words,
                   "points": [(f"point:{i}", f"Importance: {p['score']}\n{p['description']}")
                              for i, p in enumerate(kept[b])]} for b in todo]
        results = self.llm.complete_structured_batch("graphrag_reduce", inputs) if inputs else []
        for b, res in zip(todo, results):
            if res.ok:
                details[b].update({"answer": res.value["answer"], "answer_ok": True,
                                   "supporting_rows": list(res.value["supporting"])})
            else:
                details[b].update({"answer": "", "answer_ok": False, "answer_error": str(res.error_kind)})

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {**super().describe(), "community_level": s.community_level, "max_reports": s.max_reports,
                "map_context_tokens": s.map_context_tokens, "reduce_context_tokens": s.reduce_context_tokens,
                "map": "llm" if self.llm_available else "stand-in (report cosine)"}
