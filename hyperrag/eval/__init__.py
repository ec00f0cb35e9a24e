"""Evaluation: retrieval (recall@k, FCR), answers (EM/F1/JSR), context recall, answer relevancy, groundedness /
hallucination rate, causal coverage — one suite by name (:mod:`hyperrag.eval.suite`), re-scoring of finished
runs (:mod:`hyperrag.eval.rescore`, ``evaluate.py``), and the hub-bias analysis."""
