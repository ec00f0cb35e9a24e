"""LLM tasks: one module per task (prompt template, output schema, parser, ``SCHEMA_VERSION``).

``get_task("fact_filter")`` or ``get_task(FactFilter(max_facts=4))``; task modules are imported on
first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from hyperrag.llm.tasks.base import Parsed, Task

# task name -> "module:Class"
REGISTRY: dict[str, str] = {
    "openie_hipporag_ner": "openie_hipporag:NamedEntityExtraction",
    "openie_hipporag_triples": "openie_hipporag:TripleExtraction",
    "openie_graphrag": "openie_graphrag:GraphExtraction",
    "entity_summary": "entity_summary:EntitySummary",
    "module_summary": "module_summary:ModuleSummary",
    "causal_gate": "causal_gate:CausalGate",
    "causal_path_selection": "causal_path_selection:CausalPathSelection",
    "grounded_answer": "grounded_answer:GroundedAnswer",
    "hipporag_qa": "hipporag_qa:HippoRAGQA",
    "subgraph_answer": "subgraph_answer:AnswerFromSubgraph",
    "fact_filter": "fact_filter:FactFilter",
    "neighbor_scoring": "neighbor_scoring:NeighborScoring",
    "passage_selection": "passage_selection:PassageSelection",
    "passage_relations": "passage_relations:PassageRelations",
    "missing_concepts": "missing_concepts:MissingConcepts",
    "query_refinement": "query_refinement:QueryRefinement",
    "question_routing": "question_routing:QuestionRouting",
    "causal_pair_verification": "causal_pair_verification:CausalPairVerification",
    "causal_entailment": "causal_entailment:CausalEntailment",
    "claim_extraction": "claim_extraction:ClaimExtraction",
    "claim_support": "claim_support:ClaimSupport",
    "strict_rewrite": "strict_rewrite:StrictRewrite",
    "answer_relevancy": "answer_relevancy:AnswerRelevancy",
    "answer_judge": "answer_judge:AnswerJudge",
    "context_recall": "context_recall:ContextRecallJudge",
    "context_coverage": "context_coverage:ContextCoverage",
    "holisqa_generation": "holisqa_generation:HolisQAGeneration",
    "holisqa_necessity": "holisqa_necessity:HolisQANecessity",
    "lightrag_keywords": "lightrag_keywords:LightRAGKeywords",
    "graphrag_map": "graphrag_map:GraphRAGMap",
    "graphrag_reduce": "graphrag_reduce:GraphRAGReduce",
    "raptor_summary": "raptor_summary:RaptorSummary",
}


def task_class(name: str) -> type[Task]:
    if name not in REGISTRY:
        raise KeyError(f"unknown LLM task {name!r}; known: {sorted(REGISTRY)}")
    module, cls = REGISTRY[name].split(":")
    return getattr(importlib.import_module(f"hyperrag.llm.tasks.{module}"), cls)


def get_task(task: Task | str, **options: Any) -> Task:
    """A task instance from an instance (returned as is) or a registered name plus options."""
    if isinstance(task, Task):
        if options:
            raise ValueError("options are only accepted with a task name")
        return task
    return task_class(task)(**options)


def task_names() -> list[str]:
    return sorted(REGISTRY)


__all__ = ["REGISTRY", "Parsed", "Task", "get_task", "task_class", "task_names"]
