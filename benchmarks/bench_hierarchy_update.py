"""Incremental HugRAG hierarchy update vs full rebuild on MuSiQue: insert / delete the last 5% of passages.

Usage (from the repository root)::

    python benchmarks/bench_hierarchy_update.py                 # last 5% of passages, default hierarchy settings
    python benchmarks/bench_hierarchy_update.py --fraction 0.01

The knowledge graph of musique_dev is loaded from the cache (``load_or_build_kg_index``). The *old* corpus is
all passages but the last ``fraction``; its graph comes from :func:`hyperrag.graph.incremental.delete_passages`
on the full graph (so nothing is re-encoded; the touched entities of the insertion are those the deletion
reports plus the entities only the last passages have — exactly what ``insert_passages`` reports for the same
passages, up to synonym-edge search). Then, with the same :class:`HierarchySettings`:

* **insert**: hierarchy of the old graph (full build) → :func:`update_hierarchy` to the full graph, against a
  full :func:`build_hierarchy` on the full graph;
* **delete**: hierarchy of the full graph → :func:`update_hierarchy` to the old graph, against a full build on
  the old graph.

Reported per direction: seconds (update vs full build, medians of ``--repeats`` interleaved runs), modularity per level (updated vs full) and the ratio at
the top and finest levels, tree modules kept / recomputed, summaries to recompute (modules whose summary-prompt
inputs are new: the requests :class:`ModuleSummaries` would send, computed here with the stand-in child texts, as
with ``llm=none``), Leiden calls. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch

from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.graph.incremental import delete_passages
from hyperrag.hierarchy.hierarchy import build_hierarchy
from hyperrag.hierarchy.incremental import match_modules, recomputed_modules, update_hierarchy
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTree, entity_degree
from hyperrag.hierarchy.store import entity_graph, entity_texts
from hyperrag.hierarchy.summaries import ModuleSummaries, module_children
from hyperrag.hierarchy.tokens import count_tokens
from hyperrag.index.kg_index import graph_settings, load_or_build_kg_index
from hyperrag.utils.hashing import stable_digest


def log(msg: str) -> None:
    print(msg, flush=True)


def inputs_of(graph, settings):
    ei, w = entity_graph(graph, settings.edge_types)
    tokens = torch.tensor(count_tokens(entity_texts(graph, settings.entity_text), settings.token_counter))
    return ei, w, tokens


def summary_digests(tree: ModuleTree, graph) -> set[str]:
    """Digests of every module's summary-prompt inputs (stand-in child texts), as ModuleSummaries computes them."""
    hugrag = method_settings("hugrag")
    src = ModuleSummaries(None, hugrag.summaries, EntityListTexts(hugrag.module_text), progress=False)
    texts = src.stand_in(tree, graph)
    children = module_children(tree)
    degree = entity_degree(graph)
    ranked = [sorted(tree.entities(m).tolist(), key=lambda e: (-float(degree[e]), e)) for m in range(tree.num_modules)]
    leaf = tree.leaf.tolist()
    facts_in: list[list[int]] = [[] for _ in range(tree.num_modules)]
    for f, (a, b) in enumerate(graph.fact_entities.tolist()):
        if leaf[a] == leaf[b]:
            facts_in[leaf[a]].append(f)
    return {stable_digest(src.inputs(tree, graph, m, texts, children, ranked, facts_in)) for m in range(tree.num_modules)}


def compare(name, old_graph, old_h, new_graph, touched, settings, rescale=True, repeats=5) -> dict:
    ei, w, tokens = inputs_of(new_graph, settings)
    t_upds, t_fulls = [], []
    for _ in range(repeats):  # interleaved; medians (the machine may be shared)
        t0 = time.perf_counter()
        upd = update_hierarchy(old_h, old_graph.entity_names, new_graph.entity_names, ei, w, tokens, touched,
                               settings, rescale_resolution=rescale)
        t_upds.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        full = build_hierarchy(ei, w, new_graph.num_entities, tokens, settings)
        t_fulls.append(time.perf_counter() - t0)
    t_upd, t_full = statistics.median(t_upds), statistics.median(t_fulls)
    upd.hierarchy.validate()
    tree_old, tree_new = ModuleTree.from_hierarchy(old_h), ModuleTree.from_hierarchy(upd.hierarchy)
    match = match_modules(tree_old, old_graph.entity_names, tree_new, new_graph.entity_names)
    recomputed = recomputed_modules(tree_new, match, upd.touched)
    old_dig = summary_digests(tree_old, old_graph)
    new_dig = summary_digests(tree_new, new_graph)
    out = {
        "seconds_update": round(t_upd, 2), "seconds_full": round(t_full, 2),
        "speedup": round(t_full / max(t_upd, 1e-9), 1),
        "modularity_update": [round(q, 4) for q in upd.hierarchy.modularity],
        "modularity_full": [round(q, 4) for q in full.modularity],
        "top_ratio": round(upd.hierarchy.modularity[-1] / full.modularity[-1], 4),
        "finest_ratio": round(upd.hierarchy.modularity[0] / full.modularity[0], 4),
        "levels": [upd.hierarchy.num_levels, full.num_levels],
        "modules": tree_new.num_modules, "modules_full": ModuleTree.from_hierarchy(full).num_modules,
        "modules_kept": tree_new.num_modules - len(recomputed), "modules_recomputed": len(recomputed),
        "summaries_to_recompute": len(new_dig - old_dig), "touched_entities": upd.stats["touched"],
        "repartitioned_units": upd.stats["repartitioned_units"], "leiden_calls": upd.stats["leiden_calls"],
        "leiden_calls_full": full.stats["leiden_calls"], "depths": upd.stats["depths"],
    }
    log(f"{name}: {out}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", str(REPO.parent / "shared" / "data"))
                        + "/musique_dev")
    parser.add_argument("--fraction", type=float, default=0.05)
    parser.add_argument("--context-window", type=int, default=method_settings("hugrag").hierarchy.context_window)
    parser.add_argument("--repeats", type=int, default=7, help="timing repeats (medians reported)")
    parser.add_argument("--no-rescale", action="store_true", help="local Leiden runs at the plain resolution")
    args = parser.parse_args()
    rescale = not args.no_rescale
    settings = replace(method_settings("hugrag").hierarchy, backend="cpu", context_window=args.context_window)

    t0 = time.perf_counter()
    kg = load_or_build_kg_index(musique_dataset(args.data), TextEncoder(show_progress=False), graph_settings())
    full_graph = kg.graph
    if kg.provenance is None:
        raise SystemExit("the musique index has no provenance.pt: rebuild it")
    k = max(1, round(args.fraction * full_graph.num_passages))
    gone = full_graph.passage_ids[-k:]
    res = delete_passages(full_graph, kg.embeddings, kg.provenance, gone)
    old_graph = res.graph
    log(f"musique: {full_graph.num_entities} entities, {full_graph.num_passages} passages; last {k} passages "
        f"removed → {old_graph.num_entities} entities ({time.perf_counter() - t0:.1f}s)")

    ei, w, tokens = inputs_of(old_graph, settings)
    t0 = time.perf_counter()
    old_h = build_hierarchy(ei, w, old_graph.num_entities, tokens, settings)
    log(f"old hierarchy built in {time.perf_counter() - t0:.1f}s: {old_h.summary()['levels']}")
    # insertion touches what the deletion touched (mapped by name) plus the entities only the last passages have
    touched_old = res.touched_nodes[res.touched_nodes < old_graph.num_entities]
    full_id = {n: i for i, n in enumerate(full_graph.entity_names)}
    touched_full = torch.tensor([full_id[old_graph.entity_names[e]] for e in touched_old.tolist()], dtype=torch.long)
    insert = compare("insert", old_graph, old_h, full_graph, touched_full, settings, rescale, args.repeats)

    ei, w, tokens = inputs_of(full_graph, settings)
    full_h = build_hierarchy(ei, w, full_graph.num_entities, tokens, settings)
    delete = compare("delete", full_graph, full_h, old_graph, res.touched_nodes, settings, rescale, args.repeats)
    print(json.dumps({"fraction": args.fraction, "passages_changed": k, "entities": full_graph.num_entities,
                      "settings": {"context_window": settings.context_window, "min_module_size": settings.min_module_size,
                                   "max_levels": settings.max_levels, "backend": old_h.stats["backend"]},
                      "rescale_resolution": rescale, "insert": insert, "delete": delete}))


if __name__ == "__main__":
    main()
