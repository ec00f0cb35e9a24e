"""HyperRAG passage graphs: keyword (explicit) edges, query-guided (implicit) edges, tree fusion.

    from hyperrag.passage_graph import extract_keywords, keyword_edges, QueryGraphBuilder, fuse_trees

Modules: ``keywords`` (YAKE keyword sets, cached), ``explicit`` (overlap-coefficient edges via an inverted
index), ``implicit`` (dense candidates + LLM selection / relations / missing-concept rounds, with a documented
LLM-free stand-in), ``entities`` (key-entity links, the fusion's
entity merge), ``fusion`` (union-find forest fusion), ``edges`` (typed directed edge sets), ``graph``
(the evolving passage graph and its three variants).
"""

from hyperrag.passage_graph.edges import RELATIONS, EdgeSet
from hyperrag.passage_graph.entities import KeyEntitySettings, key_entity_edges
from hyperrag.passage_graph.explicit import (
           ExplicitSettings,
           keyword_edges,
           keyword_edges_incremental,
           keyword_similarity,
)
from hyperrag.passage_graph.fusion import Forest, UnionFind, build_forest, fuse_trees
from hyperrag.passage_graph.graph import VARIANTS, PassageGraph
from hyperrag.passage_graph.implicit import ImplicitSettings, QueryGraph, QueryGraphBuilder
from hyperrag.passage_graph.keywords import KeywordSettings, extract_keywords

__all__ = ["RELATIONS", "VARIANTS", "EdgeSet", "ExplicitSettings", "Forest", "ImplicitSettings",
           "KeyEntitySettings", "KeywordSettings", "PassageGraph", "QueryGraph", "QueryGraphBuilder", "UnionFind", "build_forest",
           "extract_keywords", "fuse_trees", "key_entity_edges", "keyword_edges", "keyword_edges_incremental",
           "keyword_similarity"]
