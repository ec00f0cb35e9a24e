"""Local update of the HugRAG module hierarchy, summaries and gates after documents are inserted or deleted.

    upd = update_hierarchy(old_hierarchy, old_names, new_names, edge_index, edge_weight, tokens, touched, settings)
    upd.hierarchy            # the new Hierarchy over the new entity ids
    upd.summary()            # modules kept / recomputed, Leiden calls, seconds

Hierarchy (:func:`update_hierarchy`), top down like :func:`~hyperrag.hierarchy.hierarchy.build_hierarchy`. An
entity is *touched* when it is new, or when the knowledge-graph update reports it (changed edges or support:
:attr:`hyperrag.graph.incremental.UpdateResult.touched_nodes`); an old module is *affected* when it holds a
touched or a deleted entity. At every depth, for every module P of the new hierarchy that is split (same rule as
a full build: text over ``context_window``, at least ``min_module_size`` entities, not stuck; the root always):

* every old module one depth lower that lies inside P and is not affected is **kept** as a child of P
  (same members, same relative order of ids);
* the rest of P (members of affected modules, new entities) is re-partitioned by Leiden on its induced
  subgraph, with the resolution rescaled (``γ' = γ K_R² / (4 m_P m_R)``, the modularity null model of P
  restricted to the re-partitioned part R) so the local run splits at the scale a run on P would;
* P is stuck (carried down as a copy) when it ends up with a single child, as in a full build.

Ids: kept modules keep their relative order and come first at each depth; new modules follow, numbered by
their smallest entity. Ids are compacted when modules disappear, so an id may shift; nothing downstream
depends on ids: the summary and gate checkpoints (``summaries.jsonl``, ``gates.jsonl``) are looked up by the
digest of their inputs as well as by module id, so after :func:`carry_checkpoints` into the new hierarchy
directory a rerun of :class:`~hyperrag.hierarchy.summaries.ModuleSummaries` asks the LLM only for modules whose
inputs changed (new or changed members, or a changed child summary: the changed modules' ancestors), and
:func:`update_gates` verifies only candidate pairs that involve a changed module, keeping the gates between
unchanged modules.

:func:`update_hierarchy_index` does it on index directories: it writes the updated hierarchy where
:func:`~hyperrag.hierarchy.store.load_or_build_hierarchy` looks for the new graph's hierarchy (same key) and
carries the old checkpoints over, so the next HugRAG ``index()`` loads it and only asks for the changed summaries
and gates (``tests/hierarchy/test_incremental.py`` and ``benchmarks/bench_hierarchy_update.py`` show the sequence).

:func:`follow_index` runs that sequence by itself for a retriever over a knowledge-graph index directory that
``python -m hyperrag.index insert/delete`` changes (``HugRAGRetriever(index_dir=DIR)``, ``python -m hyperrag.index
refresh``). A small state record (``<root>/hugrag-<settings digest>.json``, written atomically) remembers the
index key the last hierarchy was built on, its directory, and per entity of the (deduplicated) graph its name
and a signature: a digest of its text, its set of (neighbour name, edge type, weight) and its supporting
passage ids. When the index key changed, the entities whose signature is new or differs are the touched ones
(new entities; entities whose edges, facts or support changed — which includes every neighbour of a deleted
entity), and :func:`update_hierarchy_index` replaces the full build. A state whose hierarchy directory is gone or
unreadable falls back to a full build with a warning.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.graph.utils import csr_owner, distinct_edges, ptr_from_sorted_rows
from hyperrag.hierarchy.gates import CHECKPOINT as GATES_CHECKPOINT
from hyperrag.hierarchy.gates import GateBuilder, GateResult
from hyperrag.hierarchy.hierarchy import (
    Hierarchy,
    HierarchySettings,
    hierarchy_from_depth_labels,
    settings_dict,
)
from hyperrag.hierarchy.leiden import _clean_edges, canonical_labels, leiden, resolve_backend
from hyperrag.hierarchy.modules import ModuleTree
from hyperrag.hierarchy.store import HierarchyIndex, hierarchy_target, load_or_build_hierarchy
from hyperrag.hierarchy.summaries import CHECKPOINT as SUMMARIES_CHECKPOINT
from hyperrag.index.store import IndexCorruptError, IndexDirectory
from hyperrag.utils.atomic import atomic_write_json
from hyperrag.utils.hashing import stable_digest, text_digest

log = logging.getLogger(__name__)


@dataclass
class HierarchyUpdate:
    """Result of :func:`update_hierarchy`.

    Attributes:
        hierarchy: the updated hierarchy (new entity ids).
        old_of_new: LongTensor [E_new], each entity's id in the old hierarchy (``-1`` for new entities).
        touched: BoolTensor [E_new], the touched entities (new ones included).
        stats: per depth kept / new modules, Leiden calls, entities re-partitioned, seconds.
    """

    hierarchy: Hierarchy
    old_of_new: torch.Tensor
    touched: torch.Tensor
    stats: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return dict(self.stats)


def _id_maps(old_names: list[str], new_names: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    old_id = {n: i for i, n in enumerate(old_names)}
    old_of_new = torch.tensor([old_id.get(n, -1) for n in new_names], dtype=torch.long)
    new_of_old = torch.full((len(old_names),), -1, dtype=torch.long)
    hit = old_of_new >= 0
    new_of_old[old_of_new[hit]] = hit.nonzero().squeeze(1)
    return old_of_new, new_of_old


def update_hierarchy(old: Hierarchy, old_names: list[str], new_names: list[str], edge_index: torch.Tensor,
                     edge_weight: torch.Tensor | None, unit_tokens: torch.Tensor, touched: torch.Tensor,
                     settings: HierarchySettings, rescale_resolution: bool = True) -> HierarchyUpdate:
    """Update ``old`` to the new entity graph, re-partitioning only around the touched entities.

    Args:
        old: the hierarchy of the old entity graph (entities ``old_names``).
        old_names / new_names: entity names before / after the update (names identify entities across the two).
        edge_index, edge_weight: the new entity graph (as for :func:`build_hierarchy`).
        unit_tokens: [E_new] tokens of each new entity's text.
        touched: LongTensor of new node ids whose edges or support changed (ids >= E_new are ignored, so
            ``UpdateResult.touched_nodes`` can be passed as is); new entities are always touched.
        settings: the settings the old hierarchy was built with.
        rescale_resolution: rescale γ for the local Leiden runs (see the module docstring).
    """
    s = settings
    t0 = time.perf_counter()
    n = len(new_names)
    if n < 1:
        raise ValueError("a hierarchy needs at least one entity")
    if unit_tokens.shape[0] != n:
        raise ValueError(f"unit_tokens has {unit_tokens.shape[0]} entries for {n} entities")
    if old.num_entities != len(old_names):
        raise ValueError(f"old hierarchy has {old.num_entities} entities, old_names {len(old_names)}")
    backend = resolve_backend(s.backend)
    kw = {"seed": s.seed, "backend": backend, "iterations": s.iterations}
    old_of_new, new_of_old = _id_maps(old_names, new_names)
    touched_new = old_of_new < 0
    t = touched.long()
    touched_new[t[(t >= 0) & (t < n)]] = True
    old_bad = new_of_old < 0  # deleted
    old_bad[old_of_new[touched_new & (old_of_new >= 0)]] = True  # touched survivors
    ei, w = _clean_edges(edge_index.cpu(), None if edge_weight is None else edge_weight.cpu(), n)
    tokens = unit_tokens.to(torch.float64).cpu()
    old_depth = [old.entity_membership(lv) for lv in range(old.num_levels, 0, -1)]  # coarsest first

    parent = torch.zeros(n, dtype=torch.long)  # depth-0 "root": every entity
    want_root = True
    stuck = torch.zeros(1, dtype=torch.bool)
    depth_labels: list[torch.Tensor] = []
    calls = 0
    per_depth: list[dict[str, int]] = []
    repartitioned = 0
    while len(depth_labels) < s.max_levels:
        npar = int(parent.max()) + 1
        size = torch.bincount(parent, minlength=npar)
        if want_root:
            want = torch.ones(npar, dtype=torch.bool)
        else:
            ptok = torch.zeros(npar, dtype=torch.float64).index_add_(0, parent, tokens)
            want = (ptok > s.context_window) & (size >= max(s.min_module_size, 2)) & ~stuck
            if not bool(want.any()):
                break
        d = len(depth_labels)
        # old depth-d modules kept: unaffected, all members inside one new parent that is split
        kept_node = torch.zeros(n, dtype=torch.bool)
        label = torch.full((n,), -1, dtype=torch.long)
        nq = 0
        if d < len(old_depth):
            q_of = old_depth[d]
            nq = int(q_of.max()) + 1
            bad_q = torch.zeros(nq, dtype=torch.bool)
            bad_q[q_of[old_bad]] = True
            alive = new_of_old >= 0
            par_old = torch.full((q_of.shape[0],), -1, dtype=torch.long)
            par_old[alive] = parent[new_of_old[alive]]
            pmin = torch.full((nq,), n + npar, dtype=torch.long).scatter_reduce_(0, q_of[alive], par_old[alive], "amin")
            pmax = torch.full((nq,), -1, dtype=torch.long).scatter_reduce_(0, q_of[alive], par_old[alive], "amax")
            ok_q = ~bad_q & (pmin == pmax) & (pmax >= 0)
            ok_q[ok_q.clone()] &= want[pmax[ok_q]]
            keep_old = alive & ok_q[q_of]
            kept_node[new_of_old[keep_old]] = True
            label[new_of_old[keep_old]] = q_of[keep_old]
        # re-partition the rest of every split parent
        rest = ~kept_node & want[parent]
        grp = torch.where(rest, parent, torch.full_like(parent, -1))
        sub = torch.zeros(n, dtype=torch.long)
        pu, pv = parent[ei[0]], parent[ei[1]]
        in_p = pu == pv
        deg_p = torch.zeros(n, dtype=torch.float64).index_add_(0, ei[0][in_p], w[in_p]).index_add_(0, ei[1][in_p], w[in_p])
        m_p = torch.zeros(npar, dtype=torch.float64).index_add_(0, pu[in_p], w[in_p])
        gu = grp[ei[0]]
        intra = (gu >= 0) & (gu == grp[ei[1]])
        e_grp, e_order = torch.sort(gu[intra], stable=True)
        e_sub, w_sub = ei[:, intra][:, e_order], w[intra][e_order]
        e_ptr = ptr_from_sorted_rows(e_grp, npar)
        local = torch.empty(n, dtype=torch.long)
        rest_nodes = rest.nonzero().squeeze(1)
        r_order = torch.argsort(parent[rest_nodes], stable=True)
        rest_nodes = rest_nodes[r_order]
        r_ptr = ptr_from_sorted_rows(parent[rest_nodes], npar)
        for p in (r_ptr[1:] > r_ptr[:-1]).nonzero().squeeze(1).tolist():
            nodes = rest_nodes[r_ptr[p]: r_ptr[p + 1]]
            repartitioned += nodes.shape[0]
            local[nodes] = torch.arange(nodes.shape[0])
            edges = local[e_sub[:, e_ptr[p]: e_ptr[p + 1]]]
            wts = w_sub[e_ptr[p]: e_ptr[p + 1]]
            gamma = s.resolution
            m_r = float(wts.sum())
            if rescale_resolution and m_r > 0:
                k_r = float(deg_p[nodes].sum())
                gamma = s.resolution * k_r * k_r / (4.0 * float(m_p[p]) * m_r)
            if nodes.shape[0] == 1 or m_r == 0:
                sub[nodes] = torch.arange(nodes.shape[0])
            else:
                sub[nodes] = leiden(edges, wts, nodes.shape[0], resolution=gamma, **kw).membership
                calls += 1
        # new labels: kept old modules first (old order), then new ones (by smallest entity)
        fresh = rest
        if bool(fresh.any()):
            label[fresh] = nq + canonical_labels(parent[fresh] * n + sub[fresh])
        copy = ~want[parent]  # parents that are not split carry down a copy
        if bool(copy.any()):
            base = int(label.max()) + 1 if bool((label >= 0).any()) else 0
            label[copy] = base + canonical_labels(parent[copy])
        _, label = torch.unique(label, return_inverse=True)
        nchild = int(label.max()) + 1
        # a split parent that ended with one child failed (stuck), as in a full build
        children = torch.zeros(npar, dtype=torch.long)
        pairs = distinct_edges(torch.stack([parent, label]), max(npar, nchild))  # each (parent, child) once
        children.index_add_(0, pairs[0], torch.ones_like(pairs[0]))
        failed = want & (children <= 1)
        if not want_root and bool(failed.sum() == want.sum()):
            break
        same = 0  # modules with exactly the members of an old module at this depth (kept, or re-found)
        if d < len(old_depth):
            q_new = torch.where(old_of_new >= 0, old_depth[d][old_of_new.clamp(min=0)], torch.full_like(label, -1))
            qmin = torch.full((nchild,), nq, dtype=torch.long).scatter_reduce_(0, label, q_new, "amin")
            qmax = torch.full((nchild,), -1, dtype=torch.long).scatter_reduce_(0, label, q_new, "amax")
            old_size = torch.bincount(old_depth[d], minlength=nq)
            ok = (qmin == qmax) & (qmin >= 0)
            ok[ok.clone()] &= old_size[qmin[ok]] == torch.bincount(label, minlength=nchild)[ok]
            same = int(ok.sum())
        per_depth.append({"modules": nchild, "same_as_old": same, "kept_untouched": int(
            torch.unique(label[kept_node]).numel()) if bool(kept_node.any()) else 0})
        new_stuck = torch.zeros(nchild, dtype=torch.bool)
        new_stuck[label] = failed[parent] | stuck[parent]
        depth_labels.append(label)
        parent, stuck, want_root = label, new_stuck, False

    stats = {"backend": backend, "leiden_calls": calls, "entities": n, "touched": int(touched_new.sum()),
             "repartitioned_units": repartitioned, "depths": per_depth, "context_window": s.context_window,
             "incremental": True, "seconds": round(time.perf_counter() - t0, 3)}
    hierarchy = hierarchy_from_depth_labels(depth_labels, ei, w, n, s.resolution, stats)
    log.info("hierarchy update: %s", {k: v for k, v in stats.items() if k != "depths"})
    return HierarchyUpdate(hierarchy, old_of_new, touched_new, stats)


# ---- module-level comparison -------------------------------------------------------------------------------
def module_keys(tree: ModuleTree, names: list[str]) -> list[tuple[str, ...]]:
    """Per tree module, its member entity names (sorted): identifies a module across an update."""
    return [tuple(sorted(names[e] for e in tree.entities(m).tolist())) for m in range(tree.num_modules)]


def match_modules(old_tree: ModuleTree, old_names: list[str], new_tree: ModuleTree,
                  new_names: list[str]) -> torch.Tensor:
    """LongTensor [M_new]: the old tree module with exactly the same entities, ``-1`` for recomputed ones."""
    old_index = {k: i for i, k in enumerate(module_keys(old_tree, old_names))}
    return torch.tensor([old_index.get(k, -1) for k in module_keys(new_tree, new_names)], dtype=torch.long)


def recomputed_modules(tree: ModuleTree, match: torch.Tensor, touched: torch.Tensor) -> set[int]:
    """New tree modules that were re-partitioned: no identical old module, or a touched member (``touched``:
    BoolTensor [E_new], :attr:`HierarchyUpdate.touched`). The others are kept as they were."""
    rows = csr_owner(tree.entity_ptr)
    has_touched = torch.zeros(tree.num_modules, dtype=torch.bool)
    has_touched[rows[touched[tree.entity_idx]]] = True
    return set(((match < 0) | has_touched).nonzero().squeeze(1).tolist())


def changed_modules(match: torch.Tensor, old_texts: list[str] | None = None,
                    new_texts: list[str] | None = None) -> set[int]:
    """New tree modules that are recomputed (no identical old module) or whose text changed."""
    changed = set((match < 0).nonzero().squeeze(1).tolist())
    if old_texts is not None and new_texts is not None:
        changed |= {m for m, o in enumerate(match.tolist()) if o >= 0 and old_texts[o] != new_texts[m]}
    return changed


def carry_checkpoints(old_directory: str | Path, new_directory: str | Path) -> list[str]:
    """Copy ``summaries.jsonl`` / ``gates.jsonl`` of the old hierarchy directory into the new one (when the new one
    has none), so their digest-matching records are reused."""
    copied = []
    for name in (SUMMARIES_CHECKPOINT, GATES_CHECKPOINT):
        src, dst = Path(old_directory) / name, Path(new_directory) / name
        if src.is_file() and not dst.exists() and src.resolve() != dst.resolve():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            copied.append(name)
    return copied


def update_gates(builder: GateBuilder, tree: ModuleTree, texts: list[str], embeddings: torch.Tensor,
                 changed: set[int], old_gates: GateResult | None = None,
                 match: torch.Tensor | None = None) -> GateResult:
    """Gates of the updated tree: candidate pairs involving a ``changed`` module are verified (the checkpoint still
    answers those whose texts it has seen); pairs of two unchanged modules are never sent to the LLM, and the old
    gates between unchanged modules (``old_gates`` in old tree ids, ``match`` new → old) are kept even when the
    prefilter no longer proposes them."""
    result = builder.build(tree, texts, embeddings, changed=changed)
    if old_gates is None or match is None or old_gates.pairs.numel() == 0:
        return result
    new_of_old = {o: m for m, o in enumerate(match.tolist()) if o >= 0 and m not in changed}
    have = {(a, b) for a, b in result.pairs.T.tolist()} | {(b, a) for a, b in result.pairs.T.tolist()}
    extra, kinds, directions = [], [], []
    old_directions = old_gates.directions or ["both"] * len(old_gates.kinds)
    for (a, b), kind, direction in zip(old_gates.pairs.T.tolist(), old_gates.kinds, old_directions):
        if a in new_of_old and b in new_of_old and (new_of_old[a], new_of_old[b]) not in have:
            extra.append((new_of_old[a], new_of_old[b]))
            kinds.append(kind)
            directions.append(direction)
    if extra:
        pairs = torch.cat([result.pairs, torch.tensor(extra, dtype=torch.long).T], dim=1)
        result = GateResult(pairs, result.kinds + kinds, result.directions + directions,
                            {**result.stats, "kept_old_gates": len(extra)})
    return result


def update_hierarchy_index(old_directory: str | Path, old_names: list[str], graph: KnowledgeGraph,
                           touched: torch.Tensor, settings: HierarchySettings,
                           root: str | Path | None = None, name: str = "graph", info: Any = None,
                           ) -> tuple[HierarchyIndex, HierarchyUpdate | None]:
    """Update the hierarchy stored in ``old_directory`` (built on a graph with entities ``old_names``) to ``graph``
    and store it where :func:`load_or_build_hierarchy` (same ``settings``, ``root``, ``name``, ``info``) finds it,
    with the old ``summaries.jsonl`` / ``gates.jsonl`` carried over. Returns ``(index, update)``; ``update`` is
    None when that directory already holds the hierarchy of ``graph``."""
    t0 = time.perf_counter()
    settings, edge_index, edge_weight, texts, tokens, inputs, key, directory = hierarchy_target(
        graph, settings, root, name, info)
    if directory.matches(key):
        return HierarchyIndex(Hierarchy.load(directory.path), directory.path, False, time.perf_counter() - t0,
                              texts, tokens), None
    old = Hierarchy.load(old_directory)
    upd = update_hierarchy(old, old_names, graph.entity_names, edge_index, edge_weight, tokens, touched, settings)
    upd.hierarchy.validate()
    if directory.path.exists():
        shutil.rmtree(directory.path)
    directory.path.mkdir(parents=True)
    files = upd.hierarchy.save(directory.path)
    carry_checkpoints(old_directory, directory.path)
    directory.write_manifest(key, settings_dict(settings), inputs, files,
                             {**upd.hierarchy.summary(), "updated_from": str(old_directory)})
    log.info("updated hierarchy %s from %s in %.1fs", directory.path, old_directory, time.perf_counter() - t0)
    return HierarchyIndex(upd.hierarchy, directory.path, True, time.perf_counter() - t0, texts, tokens), upd


# ---- following a changing index directory ------------------------------------------------------------------
STATE_VERSION = 1


def entity_signatures(graph: KnowledgeGraph, texts: list[str]) -> list[str]:
    """Per entity, a digest of what its hierarchy inputs depend on: its text (``texts[e]``: name, descriptions,
    facts), its set of (neighbour name, edge type, weight) over entity–entity edges, and its passage ids."""
    num_e = graph.num_entities
    names = graph.entity_names
    ei = graph.edge_index
    keep = (ei < num_e).all(dim=0)
    nbrs: list[list[tuple[str, int, float]]] = [[] for _ in range(num_e)]
    for u, v, t, w in zip(ei[0, keep].tolist(), ei[1, keep].tolist(), graph.edge_type[keep].tolist(),
                          graph.edge_weight[keep].tolist()):
        nbrs[u].append((names[v], t, round(w, 5)))
        nbrs[v].append((names[u], t, round(w, 5)))
    ptr = graph.entity_passage_ptr.tolist()
    pidx = graph.entity_passage_idx.tolist()
    pids = graph.passage_ids
    out = []
    for e in range(num_e):
        payload = json.dumps([texts[e], sorted(nbrs[e]), sorted(pids[j] for j in pidx[ptr[e]: ptr[e + 1]])],
                             ensure_ascii=False)
        out.append(text_digest(payload, length=16))
    return out


def touched_by_signature(old_names: list[str], old_signatures: list[str], new_names: list[str],
                         new_signatures: list[str]) -> torch.Tensor:
    """LongTensor of new entity ids that are new or whose signature changed (see :func:`entity_signatures`)."""
    old = dict(zip(old_names, old_signatures))
    return torch.tensor([e for e, (n, sig) in enumerate(zip(new_names, new_signatures)) if old.get(n) != sig],
                        dtype=torch.long)


def state_path(root: str | Path, settings: HierarchySettings, extra: dict[str, Any] | None = None) -> Path:
    """Where :func:`follow_index` keeps its state for these hierarchy settings (and ``extra``: dedup settings)."""
    resolved = replace(settings, backend=resolve_backend(settings.backend), edge_types=tuple(settings.edge_types))
    digest = stable_digest({"hierarchy": settings_dict(resolved), "extra": extra or {}})
    return Path(root) / f"hugrag-{digest[:12]}.json"


def read_state(path: Path) -> dict[str, Any] | None:
    """The state record at ``path`` (None when absent, unreadable or of another version: a full build follows)."""
    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        log.warning("hierarchy state %s is unreadable: building the hierarchy from scratch", path)
        return None
    ok = (isinstance(state, dict) and state.get("version") == STATE_VERSION
          and len(state.get("entity_names", [])) == len(state.get("signatures", [None])))
    return state if ok else None


def _old_hierarchy(state: dict[str, Any], kg_key: str) -> Path | None:
    """The state's hierarchy directory when an update from it is possible, else None (with a warning if gone)."""
    if state.get("kg_key") == kg_key:
        return None
    old_dir = Path(state.get("hierarchy_dir", ""))
    manifest = IndexDirectory(old_dir).manifest() if old_dir.is_dir() else None
    if manifest is None:
        log.warning("the hierarchy the state records (%s) is gone or incomplete: building the hierarchy from scratch",
                    old_dir)
        return None
    if len(state["entity_names"]) != manifest.get("inputs", {}).get("entities"):
        log.warning("the hierarchy %s does not match its state record: building the hierarchy from scratch", old_dir)
        return None
    return old_dir


def _unreferenced(root: Path, paths: list[str]) -> list[Path]:
    """Of ``paths`` (folders under ``root``), those no state record in ``root`` refers to any more."""
    used: set[str] = set()
    for p in root.glob("hugrag-*.json"):
        st = read_state(p) or {}
        used |= {str(st.get("hierarchy_dir")), str(st.get("dedup_dir"))}
    out = []
    for p in dict.fromkeys(paths):
        path = Path(p)
        if p and p not in used and path.is_dir() and path.parent.resolve() == root.resolve():
            out.append(path)
    return out


def follow_index(graph: KnowledgeGraph, kg_key: str, settings: HierarchySettings, root: str | Path,
                 name: str = "hugrag", info: Any = None, dedup_dir: str | Path | None = None,
                 state_extra: dict[str, Any] | None = None, cleanup: bool = True,
                 ) -> tuple[HierarchyIndex, dict[str, Any]]:
    """The hierarchy of ``graph`` (the deduplicated graph of the index with manifest key ``kg_key``): loaded when
    built already, else updated locally from the hierarchy the state record points to, else built in full.

    Args:
        graph, kg_key: the graph to cluster and the key of the index it comes from.
        settings, root, name, info: as for :func:`~hyperrag.hierarchy.store.load_or_build_hierarchy` (``root``
            also holds the state record).
        dedup_dir: the dedup directory ``graph`` comes from (recorded so it can be cleaned up later).
        state_extra: further settings the state is keyed on (the dedup settings).
        cleanup: delete the previous hierarchy / dedup directories under ``root`` once no state refers to them.

    Returns ``(index, stats)``; ``stats["hierarchy"]`` is ``loaded``, ``updated`` or ``built``, with modules
    kept / recomputed, touched entities and seconds.
    """
    t0 = time.perf_counter()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    spath = state_path(root, settings, state_extra)
    state = read_state(spath)
    resolved, _, _, texts, tokens, _, key, directory = hierarchy_target(graph, settings, root, name, info)
    stats: dict[str, Any]
    hier: HierarchyIndex | None = None
    signatures: list[str] | None = None
    if directory.matches(key):
        hier = HierarchyIndex(Hierarchy.load(directory.path), directory.path, False, 0.0, texts, tokens)
        stats = {"hierarchy": "loaded", "modules_kept": ModuleTree.from_hierarchy(hier.hierarchy).num_modules,
                 "modules_recomputed": 0}
    else:
        old_dir = _old_hierarchy(state, kg_key) if state is not None else None
        if old_dir is not None:
            assert state is not None
            signatures = entity_signatures(graph, texts)
            touched = touched_by_signature(state["entity_names"], state["signatures"], graph.entity_names, signatures)
            try:
                old_h = Hierarchy.load(old_dir)
                hier, upd = update_hierarchy_index(old_dir, state["entity_names"], graph, touched, settings, root,
                                                   name, info)
            except (IndexCorruptError, OSError, KeyError, ValueError, RuntimeError) as err:
                log.warning("updating the hierarchy from %s failed (%s: %s): building it from scratch", old_dir,
                            type(err).__name__, err)
                hier = None
            if hier is not None:
                tree = ModuleTree.from_hierarchy(hier.hierarchy)
                if upd is None:
                    stats = {"hierarchy": "loaded", "modules_kept": tree.num_modules, "modules_recomputed": 0}
                else:
                    match = match_modules(ModuleTree.from_hierarchy(old_h), state["entity_names"], tree,
                                          graph.entity_names)
                    recomputed = recomputed_modules(tree, match, upd.touched)
                    stats = {"hierarchy": "updated", "updated_from": str(old_dir),
                             "modules_kept": tree.num_modules - len(recomputed),
                             "modules_recomputed": len(recomputed), "touched_entities": int(upd.touched.sum()),
                             "leiden_calls": upd.stats["leiden_calls"]}
        if hier is None:
            hier = load_or_build_hierarchy(graph, settings, root, name, info)
            tree = ModuleTree.from_hierarchy(hier.hierarchy)
            stats = ({"hierarchy": "built", "modules_kept": 0, "modules_recomputed": tree.num_modules} if hier.built
                     else {"hierarchy": "loaded", "modules_kept": tree.num_modules, "modules_recomputed": 0})
    stats.update({"modules": ModuleTree.from_hierarchy(hier.hierarchy).num_modules, "entities": graph.num_entities,
                  "seconds": round(time.perf_counter() - t0, 3)})
    fresh = (state is None or state.get("kg_key") != kg_key or state.get("hierarchy_dir") != str(hier.directory)
             or state.get("dedup_dir") != (str(dedup_dir) if dedup_dir else None))
    if fresh:
        if signatures is None:
            signatures = entity_signatures(graph, texts)
        atomic_write_json(spath, {"version": STATE_VERSION, "kg_key": kg_key, "hierarchy_dir": str(hier.directory),
                                  "dedup_dir": str(dedup_dir) if dedup_dir else None, "settings": settings_dict(resolved),
                                  "stats": stats, "entity_names": list(graph.entity_names), "signatures": signatures},
                          indent=None)
        if cleanup and state is not None:
            for stale in _unreferenced(root, [str(state.get("hierarchy_dir") or ""), str(state.get("dedup_dir") or "")]):
                log.info("removing %s (superseded)", stale)
                shutil.rmtree(stale, ignore_errors=True)
    return hier, stats
