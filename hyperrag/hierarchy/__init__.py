"""Leiden communities (cuGraph / graspologic-native / leidenalg behind one interface) and the recursive
module hierarchy H0..HL built from them, cached in index directories."""

from hyperrag.hierarchy.hierarchy import Hierarchy, HierarchySettings, build_hierarchy
from hyperrag.hierarchy.leiden import Partition, canonical_labels, leiden, modularity, resolve_backend
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTextSettings, ModuleTextSource, ModuleTree
from hyperrag.hierarchy.store import HierarchyIndex, entity_graph, entity_texts, load_or_build_hierarchy
from hyperrag.hierarchy.tokens import approx_tokens, count_tokens, make_token_counter

__all__ = [
    "EntityListTexts", "Hierarchy", "HierarchyIndex", "HierarchySettings", "ModuleTextSettings",
    "ModuleTextSource", "ModuleTree",
    "Partition", "approx_tokens", "build_hierarchy", "canonical_labels", "count_tokens", "entity_graph",
    "entity_texts", "leiden", "load_or_build_hierarchy", "make_token_counter", "modularity", "resolve_backend",
]
