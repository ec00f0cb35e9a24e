"""The hierarchy of a knowledge graph's entity graph, cached in an index directory keyed by graph + settings."""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from hyperrag.embedding.encoder import default_cache_dir
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.hierarchy.hierarchy import Hierarchy, HierarchySettings, build_hierarchy, settings_dict
from hyperrag.hierarchy.leiden import resolve_backend
from hyperrag.hierarchy.tokens import count_tokens
from hyperrag.index.store import IndexDirectory
from hyperrag.utils.hashing import stable_digest

log = logging.getLogger(__name__)
ENTITY_TEXT_MODES = ("name", "name+facts")


def entity_graph(graph: KnowledgeGraph, edge_types: tuple[str, ...] | list[str] = ("relation", "synonym")
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """Entity–entity edges of the chosen types. Returns ``(edge_index [2, M], edge_weight [M])``."""
    codes = [int(EdgeType[t.upper()]) for t in edge_types]
    keep = torch.isin(graph.edge_type.long(), torch.tensor(codes, dtype=torch.long))
    keep &= (graph.edge_index < graph.num_entities).all(dim=0)
    return graph.edge_index[:, keep], graph.edge_weight[keep]


def entity_texts(graph: KnowledgeGraph, mode: str = "name+facts", info: Any = None) -> list[str]:
    """Each entity's text: its name, or its name followed by its description(s) and the facts it is the subject of.

    This is what a module summary reads about the entity, so a module's summary input is the concatenation of its
    entities' texts: the hierarchy's stop criterion (``context_window``) measures exactly that. Every fact belongs
    to exactly one entity (its subject), so the concatenation holds each fact inside it once.

    Args:
        info: optional :class:`hyperrag.dedup.entities.EntityInfo`; its descriptions (GraphRAG extraction) come
            right after the name in ``name+facts`` mode.
    """
    if mode not in ENTITY_TEXT_MODES:
        raise ValueError(f"entity_text must be one of {ENTITY_TEXT_MODES}, got {mode!r}")
    if mode == "name":
        return list(graph.entity_names)
    facts: list[list[str]] = [[] for _ in range(graph.num_entities)]
    for (s, r, o), subj in zip(graph.facts, graph.fact_entities[:, 0].tolist()):
        facts[subj].append(f"{s} {r} {o}")
    if info is not None and info.has_descriptions:
        for e in range(graph.num_entities):
            desc = info.text(e)
            if desc:
                facts[e].insert(0, desc)
    return [f"{name}: {'; '.join(fs)}" if fs else name for name, fs in zip(graph.entity_names, facts)]


@dataclass
class HierarchyIndex:
    hierarchy: Hierarchy
    directory: Path
    built: bool  # False when loaded from an existing directory
    seconds: float
    texts: list[str]  # the entity texts the token budget was measured on
    tokens: torch.Tensor  # LongTensor [E], their token counts


def hierarchy_target(graph: KnowledgeGraph, settings: HierarchySettings, root: str | Path | None, name: str,
                     info: Any = None) -> tuple[HierarchySettings, torch.Tensor, torch.Tensor, list[str], torch.Tensor,
                                                dict[str, Any], str, IndexDirectory]:
    """What :func:`load_or_build_hierarchy` keys on: ``(settings resolved, edge_index, edge_weight, entity texts,
    their tokens, inputs, key, directory)``."""
    settings = replace(settings, backend=resolve_backend(settings.backend), edge_types=tuple(settings.edge_types))
    edge_index, edge_weight = entity_graph(graph, settings.edge_types)
    texts = entity_texts(graph, settings.entity_text, info)
    tokens = torch.tensor(count_tokens(texts, settings.token_counter), dtype=torch.long)
    inputs = {"entity_graph": stable_digest(edge_index, edge_weight, tokens), "entities": graph.num_entities}
    key = stable_digest({"inputs": inputs, "settings": settings_dict(settings)})
    root = Path(root) if root else default_cache_dir() / "index"
    directory = IndexDirectory(root / f"{name}-hier-{key[:12]}")
    return settings, edge_index, edge_weight, texts, tokens, inputs, key, directory


def load_or_build_hierarchy(graph: KnowledgeGraph, settings: HierarchySettings,
                            root: str | Path | None = None, name: str = "graph", info: Any = None) -> HierarchyIndex:
    """Load the hierarchy for (entity graph, entity texts, settings) or build it once.

    Args:
        graph: the knowledge graph; its entity–entity edges of ``settings.edge_types`` are clustered.
        settings: see :class:`HierarchySettings`; ``backend`` is resolved first (it is part of the key).
        root: folder of index directories (default ``$HYPERRAG_CACHE/index``).
        name: prefix of the directory name (the dataset's name).
        info: optional entity descriptions (:class:`hyperrag.dedup.entities.EntityInfo`) counted in entity texts.
    """
    t0 = time.perf_counter()
    settings, edge_index, edge_weight, texts, tokens, inputs, key, directory = hierarchy_target(
        graph, settings, root, name, info)
    if directory.matches(key):
        hierarchy = Hierarchy.load(directory.path)
        log.info("loaded hierarchy %s", directory.path)
        return HierarchyIndex(hierarchy, directory.path, False, time.perf_counter() - t0, texts, tokens)
    if directory.path.exists():  # stale or partial: rebuild from scratch
        shutil.rmtree(directory.path)
    directory.path.mkdir(parents=True)
    hierarchy = build_hierarchy(edge_index, edge_weight, graph.num_entities, tokens, settings)
    hierarchy.validate()
    files = hierarchy.save(directory.path)
    directory.write_manifest(key, settings_dict(settings), inputs, files, hierarchy.summary())
    log.info("built hierarchy %s in %.1fs", directory.path, time.perf_counter() - t0)
    return HierarchyIndex(hierarchy, directory.path, True, time.perf_counter() - t0, texts, tokens)
