"""Recursive Leiden hierarchy H0..HL over an entity graph, stored as membership tensors.

Top down, as GraphRAG does: Leiden on the whole entity graph gives the coarsest level; every module whose
text does not fit one context window (``context_window``) and that is not too small (``min_module_size``) is
split again by Leiden on its induced subgraph, and so on, up to ``max_levels`` levels. Levels are numbered
bottom up:

    H0 = the entities,  H1 = the finest modules,  ...,  HL = the Leiden partition of the whole graph.

``memberships[l - 1]`` maps every level-(l-1) unit to its level-l module, so every level is a full
partition of the entities. A module that stopped splitting early is carried down as a *copy* (a module
with exactly one child, the same entities) so the levels stay layered; ``copies[l - 1]`` flags them and
:class:`hyperrag.hierarchy.modules.ModuleTree` folds them away for retrieval.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch

from hyperrag.config.validation import PositiveFloat, PositiveInt, settings
from hyperrag.hierarchy.leiden import _clean_edges, canonical_labels, leiden, modularity, resolve_backend

log = logging.getLogger(__name__)


@settings
class HierarchySettings:
    """Everything that determines a hierarchy (part of its cache key).

    Attributes:
        resolution: Leiden γ, at every level.
        seed: Leiden seed (same seed → same hierarchy).
        backend: ``auto`` | ``cpu`` | ``graspologic`` | ``leidenalg`` | ``cugraph``.
        iterations: Leiden passes per call on the CPU backends.
        context_window: the summariser's context window in tokens: a module whose summary input (its entities'
            texts: names, descriptions, facts — what a leaf module's summary reads) does not fit is split again, so
            the hierarchy stops where every module's summary fits one window (HugRAG B.1).
        min_module_size: modules with fewer entities are never split.
        max_levels: at most this many module levels (L).
        edge_types: entity–entity edge types of the knowledge graph that form the entity graph.
        token_counter: ``approx`` (words × 1.3), ``words:<ratio>`` or a tokenizer folder.
        entity_text: what an entity's text is: ``name`` or ``name+facts`` (its name and the facts it is the
            subject of — the OpenIE graph's stand-in for GraphRAG's entity descriptions).
    """

    resolution: PositiveFloat
    seed: int
    backend: Literal["auto", "cpu", "graspologic", "leidenalg", "cugraph"]
    iterations: PositiveInt
    context_window: PositiveInt
    min_module_size: PositiveInt
    max_levels: PositiveInt
    edge_types: tuple[Literal["relation", "synonym"], ...]
    token_counter: str
    entity_text: Literal["name", "name+facts"]


@dataclass
class Hierarchy:
    """Levels H1..HL of modules over ``num_entities`` entities.

    Attributes:
        memberships: L LongTensors; ``memberships[l-1]`` [n_{l-1}] maps level-(l-1) units (entities for l = 1)
            to level-l modules numbered ``0..n_l - 1``.
        copies: L BoolTensors; ``copies[l-1]`` [n_l] marks level-l modules that only carry one child down.
        modularity: per level l = 1..L, modularity of the level-l entity partition on the entity graph.
        stats: sizes, timings, Leiden calls.
    """

    memberships: list[torch.Tensor]
    copies: list[torch.Tensor]
    modularity: list[float]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def num_levels(self) -> int:
        return len(self.memberships)

    @property
    def num_entities(self) -> int:
        return int(self.memberships[0].shape[0]) if self.memberships else 0

    def num_modules(self, level: int) -> int:
        """n_l, the number of modules of level ``level`` (``num_entities`` for level 0)."""
        if level == 0:
            return self.num_entities
        return int(self.copies[level - 1].shape[0])

    def _check(self, level: int) -> None:
        if not 1 <= level <= self.num_levels:
            raise IndexError(f"level {level} outside 1..{self.num_levels}")

    def entity_membership(self, level: int) -> torch.Tensor:
        """LongTensor [E]: the level-``level`` module of every entity."""
        self._check(level)
        memb = self.memberships[0]
        for lv in range(2, level + 1):
            memb = self.memberships[lv - 1][memb]
        return memb

    def parent(self, level: int) -> torch.Tensor | None:
        """LongTensor [n_l]: each level-``level`` module's parent at level+1; None at the top."""
        self._check(level)
        return self.memberships[level] if level < self.num_levels else None

    def children(self, level: int) -> tuple[torch.Tensor, torch.Tensor]:
        """CSR ``(ptr [n_l + 1], idx)``: the level-(l-1) units (entities for l = 1) of each level-l module."""
        self._check(level)
        memb = self.memberships[level - 1]
        idx = torch.argsort(memb, stable=True)
        ptr = torch.zeros(self.num_modules(level) + 1, dtype=torch.long)
        ptr[1:] = torch.cumsum(torch.bincount(memb, minlength=self.num_modules(level)), 0)
        return ptr, idx

    def sizes(self, level: int) -> torch.Tensor:
        """LongTensor [n_l]: entities per level-``level`` module."""
        return torch.bincount(self.entity_membership(level), minlength=self.num_modules(level))

    def validate(self) -> None:
        """Raise ValueError unless every level is a partition into non-empty, contiguously numbered modules."""
        units = self.num_entities
        for lv, (memb, copy) in enumerate(zip(self.memberships, self.copies), start=1):
            if memb.shape[0] != units:
                raise ValueError(f"level {lv}: membership has {memb.shape[0]} entries for {units} units")
            n = copy.shape[0]
            if memb.numel() and (int(memb.min()) < 0 or int(memb.max()) >= n):
                raise ValueError(f"level {lv}: module ids outside 0..{n - 1}")
            counts = torch.bincount(memb, minlength=n)
            if bool((counts == 0).any()):
                raise ValueError(f"level {lv}: {int((counts == 0).sum())} empty modules")
            if lv > 1 and not torch.equal(copy, counts == 1):
                raise ValueError(f"level {lv}: copy flags disagree with single-child modules")
            units = n

    def summary(self) -> dict[str, Any]:
        levels = []
        for lv in range(1, self.num_levels + 1):
            size = self.sizes(lv)
            levels.append({"level": lv, "modules": self.num_modules(lv),
                           "distinct": self.num_modules(lv) - int(self.copies[lv - 1].sum()),
                           "modularity": round(self.modularity[lv - 1], 6),
                           "size_max": int(size.max()), "size_median": int(size.median()),
                           "singletons": int((size == 1).sum())})
        return {"entities": self.num_entities, "levels": levels, **self.stats}

    # ---- persistence -------------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> list[str]:
        directory = Path(directory)
        torch.save({"memberships": self.memberships, "copies": self.copies}, directory / "hierarchy.pt")
        (directory / "hierarchy.json").write_text(json.dumps({"modularity": self.modularity, "stats": self.stats},
                                                             default=str))
        return ["hierarchy.pt", "hierarchy.json"]

    @classmethod
    def load(cls, directory: str | Path) -> Hierarchy:
        directory = Path(directory)
        tensors = torch.load(directory / "hierarchy.pt", weights_only=True)
        meta = json.loads((directory / "hierarchy.json").read_text())
        return cls(tensors["memberships"], tensors["copies"], meta["modularity"], meta.get("stats", {}))


def build_hierarchy(edge_index: torch.Tensor, edge_weight: torch.Tensor | None, num_nodes: int,
                    unit_tokens: torch.Tensor, settings: HierarchySettings) -> Hierarchy:
    """Recursive Leiden.

    Args:
        edge_index: LongTensor [2, M], the entity graph (each undirected edge once).
        edge_weight: FloatTensor [M] or None.
        num_nodes: E.
        unit_tokens: LongTensor/FloatTensor [E], tokens of each entity's text; a module's text size is the sum
            over its entities (swap in summary lengths once module summaries exist).
        settings: see :class:`HierarchySettings` (``edge_types`` / ``token_counter`` are the caller's business).
    """
    s = settings
    if num_nodes < 1:
        raise ValueError("a hierarchy needs at least one entity")
    if unit_tokens.shape[0] != num_nodes:
        raise ValueError(f"unit_tokens has {unit_tokens.shape[0]} entries for {num_nodes} entities")
    t0 = time.perf_counter()
    backend = resolve_backend(s.backend)
    ei, w = _clean_edges(edge_index.cpu(), None if edge_weight is None else edge_weight.cpu(), num_nodes)
    tokens = unit_tokens.to(torch.float64).cpu()
    kw = {"resolution": s.resolution, "seed": s.seed, "backend": backend, "iterations": s.iterations}
    calls = 1
    depth_labels = [leiden(ei, w, num_nodes, **kw).membership]
    stuck = torch.zeros(int(depth_labels[0].max()) + 1 if num_nodes else 0, dtype=torch.bool)
    while len(depth_labels) < s.max_levels:
        labels = depth_labels[-1]
        ncom = int(labels.max()) + 1
        module_tokens = torch.zeros(ncom, dtype=torch.float64).index_add_(0, labels, tokens)
        size = torch.bincount(labels, minlength=ncom)
        want = (module_tokens > s.context_window) & (size >= max(s.min_module_size, 2)) & ~stuck
        if not bool(want.any()):
            break
        lab_u = labels[ei[0]]
        intra = (lab_u == labels[ei[1]]) & want[lab_u]
        e_mod, e_order = torch.sort(lab_u[intra], stable=True)
        e_sub, w_sub = ei[:, intra][:, e_order], w[intra][e_order]
        e_ptr = torch.searchsorted(e_mod, torch.arange(ncom + 1))
        n_order = torch.argsort(labels, stable=True)
        n_ptr = torch.zeros(ncom + 1, dtype=torch.long)
        n_ptr[1:] = torch.cumsum(size, 0)
        local = torch.empty(num_nodes, dtype=torch.long)
        sub = torch.zeros(num_nodes, dtype=torch.long)  # sub-community of each node inside its module
        failed = torch.zeros(ncom, dtype=torch.bool)
        for mod in want.nonzero().squeeze(1).tolist():
            nodes = n_order[n_ptr[mod]: n_ptr[mod + 1]]
            local[nodes] = torch.arange(nodes.shape[0])
            edges = local[e_sub[:, e_ptr[mod]: e_ptr[mod + 1]]]
            part = leiden(edges, w_sub[e_ptr[mod]: e_ptr[mod + 1]], nodes.shape[0], **kw)
            calls += 1
            if part.num_communities <= 1:
                failed[mod] = True
            else:
                sub[nodes] = part.membership
        if bool(failed.sum() == want.sum()):  # Leiden split nothing: the hierarchy is complete
            break
        new = canonical_labels(labels * num_nodes + sub)
        new_stuck = torch.zeros(int(new.max()) + 1, dtype=torch.bool)
        new_stuck[new] = failed[labels] | stuck[labels]
        depth_labels.append(new)
        stuck = new_stuck

    stats = {"backend": backend, "leiden_calls": calls, "seconds": round(time.perf_counter() - t0, 3),
             "context_window": s.context_window}
    hierarchy = hierarchy_from_depth_labels(depth_labels, ei, w, num_nodes, s.resolution, stats)
    log.info("hierarchy: %s", hierarchy.summary())
    return hierarchy


def hierarchy_from_depth_labels(depth_labels: list[torch.Tensor], ei: torch.Tensor, w: torch.Tensor, num_nodes: int,
                                resolution: float, stats: dict[str, Any]) -> Hierarchy:
    """A :class:`Hierarchy` from per-depth entity labels (``depth_labels[0]`` the coarsest partition, each
    depth nested in the previous one, labels contiguous 0..n-1; module ids are kept as given)."""
    # depth d (1 = coarsest) → level L + 1 - d (1 = finest)
    num_levels = len(depth_labels)
    entity_level = depth_labels[::-1]  # entity_level[l-1] = entity → level-l module
    memberships, copies = [entity_level[0]], [torch.zeros(int(entity_level[0].max()) + 1, dtype=torch.bool)]
    for lv in range(2, num_levels + 1):
        child, par = entity_level[lv - 2], entity_level[lv - 1]
        up = torch.zeros(int(child.max()) + 1, dtype=torch.long)
        up[child] = par
        memberships.append(up)
        copies.append(torch.bincount(up, minlength=int(par.max()) + 1) == 1)
    mods = [modularity(ei, w, entity_level[lv], num_nodes, resolution) for lv in range(num_levels)]
    return Hierarchy(memberships, copies, mods, stats)


def settings_dict(settings: HierarchySettings) -> dict[str, Any]:
    out = asdict(settings)
    out["edge_types"] = list(settings.edge_types)
    return out
