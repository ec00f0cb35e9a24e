"""How the causal graph is built: the settings shared by :mod:`hyperrag.causal.graph` (assembly, the index key)
and :mod:`hyperrag.causal.records` (per-passage scoring and verification), kept apart so that neither imports the
other for them.
"""

from __future__ import annotations

from hyperrag.config.validation import Cosine, NonNegativeInt, PositiveInt, Probability, settings
from hyperrag.ops.knn_graph import KnnSettings


@settings
class CausalGraphSettings:
    """How the causal graph is built (CDF-RAG's ``causal``; part of the causal index key).

    Attributes:
        accept_threshold: a candidate pair is an edge when its score is at least this.
        weak_prior: rule-only weight of weak connectives (after/since...): 0 = not accepted.
        openie_prior: rule-only weight of causal OpenIE relations.
        use_openie: causal OpenIE relations are candidates too.
        max_span_words: cause / effect spans longer than this are dropped.
        alias_threshold: cosine at which two causal nodes get an alias link.
        alias_topk: nearest nodes examined per node for alias links.
        verify: LLM verification of accepted pairs when an LLM is available.
        verify_max_pairs: verifications per build at most (an update: per its new pairs); null = every pair.
        verify_domain: the domain named in the verification prompt's contextual metadata.
        llm_drop_rejected: drop pairs the LLM rejects (else keep them with the classifier's weight).
        knn: how the alias links' neighbours are searched (``${graph.knn}``: exact or approximate by size).
    """

    accept_threshold: Probability
    weak_prior: Probability
    openie_prior: Probability
    use_openie: bool
    max_span_words: PositiveInt
    alias_threshold: Cosine
    alias_topk: NonNegativeInt
    verify: bool
    verify_max_pairs: NonNegativeInt | None
    verify_domain: str
    llm_drop_rejected: bool
    knn: KnnSettings


__all__ = ["CausalGraphSettings"]
