"""Entity deduplication for the HugRAG entity graph H0: fuzzy string matching, then embedding similarity.

    from hyperrag.dedup import DedupSettings, load_or_build_dedup
    deduped = load_or_build_dedup(graph, embeddings, entity_info, settings, root)  # merged graph + audit

Stages (:mod:`~hyperrag.dedup.fuzzy`, :mod:`~hyperrag.dedup.semantic`) propose merge pairs; :mod:`~hyperrag.dedup.merge`
joins them with a union-find and rewrites the knowledge graph, pooling descriptions, passages and evidence
edges; :mod:`~hyperrag.dedup.store` caches the result next to the KG index with a JSONL audit of every merge.
"""

from __future__ import annotations

from hyperrag.utils.lazy import lazy_exports

_LAZY = {
    "EntityInfo": "hyperrag.dedup.entities",
    "read_entity_info": "hyperrag.dedup.entities",
    "fuzzy_pairs": "hyperrag.dedup.fuzzy",
    "semantic_pairs": "hyperrag.dedup.semantic",
    "UnionFind": "hyperrag.utils.union_find",
    "MergeResult": "hyperrag.dedup.merge",
    "merge_entities": "hyperrag.dedup.merge",
    "DedupSettings": "hyperrag.dedup.store",
    "DedupIndex": "hyperrag.dedup.store",
    "dedup_graph": "hyperrag.dedup.store",
    "load_or_build_dedup": "hyperrag.dedup.store",
}


__getattr__ = lazy_exports(__name__, _LAZY)

__all__ = list(_LAZY)
