"""Re-score existing predictions with the evaluation suite — no retrieval.

    python evaluate.py predictions=outputs/retrieve/musique/dense/2025-01-01_00-00-00
    python evaluate.py predictions='multirun/methods_musique/**/predictions.jsonl'
    python evaluate.py predictions=<run> metrics=[retrieval,context_recall,groundedness_lexical]
    python evaluate.py predictions=<run> llm=local metrics=[groundedness,answer_relevancy]   # LLM judges
    python evaluate.py predictions=<holisqa run> queries=<holisqa>/queries.jsonl          # gold sentences

Metrics (hyperrag/eval/suite.py): retrieval (recall@k, fcr@k), context_recall, qa (EM/F1/JSR), accuracy
(multiple choice: the answer names the correct option),
answer_relevancy (LLM, Ragas-style) and answer_relevancy_emb, groundedness (LLM claims) and
groundedness_lexical (each with a hallucination rate), causal_coverage. ``metrics=auto`` runs every metric
whose inputs exist. Results go to ``evaluation.json`` (+ per-query ``evaluation.jsonl``) beside each
predictions file, or under ``out=``; a table is printed.
"""

from __future__ import annotations

import logging
import os
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import hydra
from omegaconf import DictConfig

from hyperrag.errors import exit_on_input_error

log = logging.getLogger("evaluate")


@hydra.main(version_base="1.3", config_path="hydra_configs", config_name="evaluate")
@exit_on_input_error
def main(cfg: DictConfig) -> list[dict[str, Any]]:
    return run(cfg)


def run(cfg: DictConfig) -> list[dict[str, Any]]:
    """Evaluate every predictions file ``cfg.predictions`` names; returns one record per file."""
    from hyperrag.causal.reference import causal_reference_from_index
    from hyperrag.eval.rescore import evaluate_predictions, print_evaluation_table
    from hyperrag.utils.console import configure_console

    configure_console(bool(cfg.get("verbose", False)))  # every judge request only with verbose=true

    records = evaluate_predictions(cfg, reference=causal_reference_from_index)
    print_evaluation_table(records)
    for r in records:
        log.info("%s → evaluation.json", r["predictions"])
    return records


if __name__ == "__main__":
    from hyperrag.config.command_line import check_command_line

    check_command_line("evaluate")  # a bad choice or override: one line, exit 2 (not Hydra's paragraph)
    main()
