"""Batched personalized PageRank (hyperrag.ops.ppr) against igraph/prpack, one query at a time.

Usage (from the repository root)::

    python benchmarks/bench_ppr.py --threads 1          # the retriever's graph + the stand-in graph
    python benchmarks/bench_ppr.py --large              # + the 1M-node synthetic graph (minutes)
    python benchmarks/bench_ppr.py --ablate             # each optimisation switched off, retriever's graph

Rows:

* **retriever's graph** (the headline): the graph HippoRAG 2 ranks on, built by ``HippoRAG2Retriever.index``
  on musique_dev (entities then passages; relation, synonym and context edges with their weights, used in
  both directions), and the reset vectors its ``seed`` / ``reset_vectors`` build for the 51 questions (top
  facts' entities + ``passage_node_weight`` × dense passage scores), tiled to ``--queries`` columns; its
  damping, ``tol`` and ``max_iter`` (``hydra_configs/method/hipporag2.yaml``). Ours is timed as the retriever
  calls it, returning the passages' scores only (``--all-nodes``: every node); the error against igraph is
  checked on every node. igraph gets the same weighted undirected graph and reset rows. MiniLM embeddings come
  from the encoder's disk cache (the first run embeds and builds the index: a few minutes).
* **stand-in graph**: the unweighted OpenIE graph this benchmark used before issue 21 (passages first,
  relation + context edges, no synonyms), with random resets.
* **synthetic** (``--large``): a 1M-node / 10M-edge Chung–Lu graph (memory and scale).

Every figure is taken in this one process, ours and igraph's alternating (``--repeats`` timed pairs after
a warm-up pair): best of each, and the median of the paired ratios. One torch thread by default, like igraph; ``--threads 2`` uses both cores.
The last line printed is one JSON object.
"""

from __future__ import annotations

import os

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # let torch back big buffers with huge pages (TLB)

import argparse
import json
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from hyperrag.ops.ppr import PPRGraph, PPRStats, personalized_pagerank
from hyperrag.ops.ppr.graph import _csr


def log(msg: str) -> None:
    print(msg, flush=True)


def canon(name: str) -> str:
    return re.sub(r"\s+", " ", name.strip().lower())


def musique_graph(musique_dir: Path) -> tuple[int, np.ndarray, int]:
    """(num_nodes, edge_index [2, E], num_passages); passages are nodes 0..P-1."""
    docs = json.loads((musique_dir / "openie_gpt-3.5-turbo-1106.json").read_text())["docs"]
    corpus = json.loads((musique_dir / "corpus.json").read_text())
    if len(docs) != len(corpus):
        raise ValueError(f"OpenIE has {len(docs)} docs but corpus has {len(corpus)} passages")
    ids: dict[str, int] = {}
    src: list[int] = []
    dst: list[int] = []

    def node(key: str) -> int:
        return ids.setdefault(key, len(ids) + len(corpus))

    for i, doc in enumerate(docs):
        ents: set[str] = set()
        for t in doc.get("extracted_triples") or []:
            if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)):
                continue
            s, o = canon(t[0]), canon(t[2])
            if s and o:
                src.append(node(s))
                dst.append(node(o))
                ents.update((s, o))
        ents.update(canon(e) for e in doc.get("extracted_entities") or [] if isinstance(e, str) and canon(e))
        for e in sorted(ents):
            src.append(i)
            dst.append(node(e))
    return len(ids) + len(corpus), np.array([src, dst], dtype=np.int64), len(corpus)


def power_law_graph(n: int, m: int, gamma: float, seed: int) -> np.ndarray:
    """Chung–Lu graph: ``m`` distinct undirected edges, expected degrees ~ power law with exponent gamma."""
    rng = np.random.default_rng(seed)
    w = rng.permutation(np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (gamma - 1.0)))
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    keys = np.empty(0, dtype=np.int64)
    while keys.size < m:
        k = int((m - keys.size) * 1.1) + 1000
        a, b = np.searchsorted(cdf, rng.random(k)), np.searchsorted(cdf, rng.random(k))
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        keys = np.unique(np.concatenate([keys, (lo * n + hi)[lo != hi]]))
    keys = rng.permutation(keys)[:m]
    return np.stack([keys // n, keys % n])


def random_resets(
    n: int, queries: int, seed: int, passages: int = 0, passage_weight: float = 0.0
) -> np.ndarray:
    """[Q, n] float64: 1–10 random seed nodes with random weights (+ optional weight on every passage)."""
    rng = np.random.default_rng(seed)
    reset = np.zeros((queries, n))
    for q in range(queries):
        k = int(rng.integers(1, 11))
        reset[q, rng.choice(n, k, replace=False)] = rng.random(k) + 0.01
    if passage_weight > 0:
        reset[:, :passages] += passage_weight * rng.random((queries, passages)) / passages
    return reset


def igraph_graph(edges: np.ndarray, n: int, weights: np.ndarray | None = None):
    """igraph's undirected graph of ``edges`` [2, E], weights stored as the edge attribute ``weight``."""
    import igraph as ig

    g = ig.Graph(n=n, edges=edges.T, directed=False)
    if weights is not None:
        g.es["weight"] = weights.tolist()
    return g


def igraph_run(g, reset: np.ndarray, damping: float) -> tuple[np.ndarray, float]:
    """prpack per query (rows of ``reset`` [Q, n]); returns (PPR [Q, n], seconds)."""
    weights = "weight" if "weight" in g.es.attributes() else None
    out = np.empty_like(reset)
    t0 = time.perf_counter()
    for q in range(reset.shape[0]):
        out[q] = g.personalized_pagerank(
            directed=False, damping=damping, reset=reset[q], weights=weights, implementation="prpack"
        )
    return out, time.perf_counter() - t0


def ours_run(graph: PPRGraph, reset: torch.Tensor, damping: float, repeats: int, **kw):
    times, out, stats = [], None, None
    for _ in range(repeats):
        stats = PPRStats()
        t0 = time.perf_counter()
        out = personalized_pagerank(graph, reset, damping=damping, stats=stats, **kw)
        times.append(time.perf_counter() - t0)
    return out, min(times), float(np.median(times)), stats


def bytes_moved(graph: PPRGraph, stats: PPRStats) -> float:
    """CSR values + indices + row pointers per SpMM call, plus gathered input rows and written output rows."""
    nnz, n, isz = graph.transition_t.values().numel(), graph.num_nodes, graph.transition_t.element_size()
    per_call = nnz * (isz + 8) + (n + 1) * 8
    return stats.spmm_calls * per_call + stats.column_iterations * (nnz + n) * isz


def naive_batched(graph: PPRGraph, reset: torch.Tensor, damping: float, tol: float = 1.2e-7) -> torch.Tensor:
    """The textbook batched baseline: whole batch [N, B] power iteration until every column converged."""
    n = graph.num_nodes
    r = (reset / reset.sum(1, keepdim=True)).T.contiguous()
    mat = _csr(
        graph.transition_t.crow_indices(),
        graph.transition_t.col_indices(),
        graph.transition_t.values() * damping,
        n,
    )
    x = r.clone()
    for _ in range(100):
        y = mat @ x
        y += r * (1 - damping + damping * x[graph.dangling].sum(0))
        done = bool(((y - x).abs().sum(0) < tol).all())
        x = y
        if done:
            break
    return x.T


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title)
        for h in header:
            t.add_column(h, justify="right")
        for r in rows:
            t.add_row(*r)
        Console(width=140).print(t)
    except ImportError:
        log(f"\n{title}\n" + " | ".join(header))
        for r in rows:
            log(" | ".join(r))


def retriever_graph(args) -> dict:
    """The HippoRAG 2 retriever's own graph and the 51 questions' reset vectors, built by its code."""
    from hyperrag.config import method_settings
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever

    t0 = time.perf_counter()
    dataset = musique_dataset(args.musique_dir)
    settings = method_settings("hipporag2")
    retriever = HippoRAG2Retriever(settings, encoder=TextEncoder(show_progress=False), device="cpu")
    retriever.index(dataset)
    seeds = retriever.seed([q.question for q in dataset.queries])
    reset = retriever.reset_vectors(seeds).float()  # [51, N]: entity seeds, then weighted passages
    kg = retriever.graph
    edge_index, edge_weight = retriever.ppr_weights.edge_index, retriever.ppr_weights.weight  # what index() used
    log(f"retriever's graph and {reset.shape[0]} reset vectors in {time.perf_counter() - t0:.1f} s")
    return {
        "graph": retriever.ppr_graph,
        "passages": retriever.passage_nodes,
        "edges": edge_index.numpy(),
        "weights": edge_weight.double().numpy(),
        "base_reset": reset,
        "damping": settings.damping,
        "tol": settings.tol,
        "max_iter": settings.max_iter,
        "edge_types": kg.count_by_type(),
        "seeds_per_query": float((reset[:, : kg.num_entities] > 0).sum(1).float().mean()),
        "passage_mass_share": float((reset[:, kg.num_entities :].sum(1) / reset.sum(1)).mean()),
    }


def compare(name: str, key: str, graph: PPRGraph, ig_g, reset: torch.Tensor, dampings: list[float], args,
            results: dict, nodes: torch.Tensor | None = None, **solver) -> None:
    """Ours (batched, all columns) vs igraph (per query, the first --igraph-queries columns) per damping.

    ``reset``: [Q, N] float32; ``nodes``: the node ids the caller reads (the retriever: its passages), which our
    timed calls return (igraph has no such option: it always returns every node; its per-query time is the
    solve); the error is checked on them and, with one untimed call, on every node; ``solver``: keyword
    arguments of ``personalized_pagerank`` (tol, max_iter)."""
    n, queries = graph.num_nodes, reset.shape[0]
    reset_np = reset.double().numpy()
    k = min(args.igraph_queries, queries)
    rows = []
    for damping in dampings:
        # igraph and ours alternate --repeats times after one unrecorded pair (warm-up), so that both share
        # whatever load the machine carries at the time; speedup = best / best, plus the median of the paired
        # ratios (robust to a load that changes between pairs).
        ig_times, ours = [], []
        for rep in range(args.repeats + 1):
            ig_out, ig_time = igraph_run(ig_g, reset_np[:k], damping)
            run = ours_run(graph, reset, damping, 1, block_size=args.block_size, method=args.method, nodes=nodes,
                           **solver)
            if rep:
                ig_times.append(ig_time)
                ours.append(run)
        out, best, _, stats = min(ours, key=lambda o: o[1])
        med = float(np.median([o[1] for o in ours]))
        ig_per_q = min(ig_times) / k
        speedup_median = float(np.median([t / k * queries / o[1] for t, o in zip(ig_times, ours)]))
        cols = slice(None) if nodes is None else nodes.numpy()
        err = float(np.abs(out[:k].double().numpy() - ig_out[:, cols]).max())
        full = out if nodes is None else personalized_pagerank(graph, reset[:k], damping=damping, **solver)
        err = max(err, float(np.abs(full[:k].double().numpy() - ig_out).max()))  # returned and all nodes
        speedup = ig_per_q * queries / best
        gbps = bytes_moved(graph, stats) / best / 1e9
        rows.append(
            [
                f"{damping}",
                f"{ig_per_q * 1e3:.2f}",
                f"{best / queries * 1e3:.3f}",
                f"{med / queries * 1e3:.3f}",
                f"{speedup:.1f}x",
                f"{speedup_median:.1f}x",
                f"{err:.2e}",
                f"{stats.column_iterations / queries:.1f}",
                f"{gbps:.1f}",
            ]
        )
        log(
            f"{name}, damping {damping}: igraph {ig_per_q * 1e3:.2f} ms/q, ours {best / queries * 1e3:.3f} ms/q "
            f"(median {med / queries * 1e3:.3f}), speedup {speedup:.1f}x (median of pairs {speedup_median:.1f}x), "
            f"max|err| {err:.2e}"
        )
        results.setdefault(key, {})[str(damping)] = {
            "igraph_ms_per_query": ig_per_q * 1e3,
            "ours_ms_per_query": best / queries * 1e3,
            "ours_ms_per_query_median": med / queries * 1e3,
            "speedup_vs_igraph": speedup,
            "speedup_median_of_pairs": speedup_median,
            "max_abs_err": err,
            "checked_columns": k,
            "returned_nodes": n if nodes is None else int(nodes.numel()),
            "queries_per_s": queries / best,
            "achieved_gb_per_s": gbps,
            "iterations_per_query": stats.column_iterations / queries,
            "max_iterations": stats.max_iterations,
        }
    returned = "all nodes" if nodes is None else f"{nodes.numel()} nodes returned"
    table(
        f"{name} ({n} nodes, {graph.num_arcs} arcs, {graph.dangling.numel()} dangling), {queries} queries, "
        f"{returned}, {torch.get_num_threads()} threads",
        ["damping", "igraph ms/q", "ours ms/q", "ours median", "speedup", "pairs median", "max|err|", "iters/q",
         "GB/s"],
        rows,
    )


def bench_retriever(args, results: dict, dampings: list[float]) -> None:
    """The headline row: the retriever's graph and resets (``dampings[0]``: the retriever's by default)."""
    rg = retriever_graph(args)
    graph, base = rg["graph"], rg["base_reset"]
    reset = base[torch.arange(args.queries) % base.shape[0]].contiguous()  # column i is question i mod 51
    log(f"retriever's graph: {graph}, edge types {rg['edge_types']}")
    t0 = time.perf_counter()
    ig_g = igraph_graph(rg["edges"], graph.num_nodes, rg["weights"])
    log(f"igraph graph built in {time.perf_counter() - t0:.2f} s")
    # What the retriever asks for: the passages' scores (``HippoRAG2Retriever.retrieve``), unless --all-nodes.
    nodes = None if args.all_nodes else rg["passages"]
    compare("Retriever's graph (HippoRAG 2, musique_dev)", "retriever_graph", graph, ig_g, reset, dampings, args,
            results, nodes=nodes, tol=rg["tol"], max_iter=rg["max_iter"])
    results["retriever_graph"].update(
        nodes=graph.num_nodes, arcs=graph.num_arcs, dangling=int(graph.dangling.numel()),
        edge_types=rg["edge_types"], distinct_queries=int(base.shape[0]), seeds_per_query=rg["seeds_per_query"],
        passage_mass_share=rg["passage_mass_share"], tol=rg["tol"], max_iter=rg["max_iter"],
    )
    if args.ablate:
        rcm = PPRGraph.from_edges(torch.from_numpy(rg["edges"]), graph.num_nodes, torch.from_numpy(rg["weights"]),
                                  reorder=True)
        ablate(args, graph, rcm, ig_g, reset, dampings[0], results, tol=rg["tol"], max_iter=rg["max_iter"])


def bench_stand_in(args, results: dict, dampings: list[float]) -> None:
    """The second row: the unweighted stand-in graph with random resets (the figure before issue 21)."""
    n, edges, passages = musique_graph(Path(args.musique_dir))
    log(f"stand-in graph: {n} nodes, {edges.shape[1]} edges")
    reset_np = random_resets(n, args.queries, args.seed, passages, args.passage_weight)
    reset = torch.from_numpy(reset_np).float()
    t0 = time.perf_counter()
    graph = PPRGraph.from_edges(torch.from_numpy(edges), n, reorder=args.reorder)
    log(f"PPRGraph.from_edges: {time.perf_counter() - t0:.2f} s  {graph}")
    compare("Stand-in graph (unweighted OpenIE, random seeds)", "stand_in", graph, igraph_graph(edges, n), reset,
            dampings, args, results)
    results["stand_in"].update(nodes=n, edges=int(edges.shape[1]), dangling=int(graph.dangling.numel()))


def ablate(args, graph: PPRGraph, rcm: PPRGraph, ig_g, reset: torch.Tensor, damping: float, results: dict,
           **solver) -> None:
    """Each optimisation switched off in turn on the retriever's graph (``rcm``: the same graph stored in RCM
    order). Every variant is timed interleaved with igraph on 100 queries, best of --repeats each, so that the
    speedups share the load."""
    k = min(100, args.queries)
    reset_np = reset.double().numpy()
    threads = torch.get_num_threads()

    def ppr(g=graph, **kw):
        return lambda: personalized_pagerank(g, reset, damping, **solver, **kw)

    def other_threads():
        torch.set_num_threads(3 - threads if threads <= 2 else 1)
        try:
            return personalized_pagerank(graph, reset, damping, **solver)
        finally:
            torch.set_num_threads(threads)

    variants = [
        ("naive: whole batch [N, B], power, no early exit", lambda: naive_batched(graph, reset, damping)),
        ("power, block=B, early exit", ppr(method="power", block_size=args.queries)),
        ("power, block=32", ppr(method="power", block_size=32)),
        ("chebyshev, block=32 (default)", ppr(block_size=32)),
        ("chebyshev, block=32, RCM reorder", ppr(rcm, block_size=32)),
        *[(f"chebyshev, block={b}", ppr(block_size=b)) for b in (8, 16, 64, 128)],
        (f"default, {3 - threads if threads <= 2 else 1} thread(s)", other_threads),
    ]
    rows = []
    for name, fn in variants:
        fn()
        best, ig_best = 1e9, 1e9
        for _ in range(args.repeats):
            ig_out, ig_time = igraph_run(ig_g, reset_np[:k], damping)
            ig_best = min(ig_best, ig_time / k)
            t0 = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - t0)
        err = float(np.abs(out[:k].double().numpy() - ig_out).max())
        rows.append(
            [
                name,
                f"{best / args.queries * 1e3:.3f}",
                f"{ig_best * 1e3:.2f}",
                f"{ig_best * args.queries / best:.1f}x",
                f"{err:.1e}",
            ]
        )
    table(
        f"Ablation, retriever's graph, damping {damping}, {threads} thread(s)",
        ["variant", "ms/query", "igraph ms/q", "speedup", "max|err|"],
        rows,
    )
    results["ablation_ms_per_query"] = {r[0]: float(r[1]) for r in rows}


def bench_large(args, results: dict, damping: float) -> None:
    t0 = time.perf_counter()
    edges = power_law_graph(args.large_nodes, args.large_edges, args.gamma, args.seed)
    n = args.large_nodes
    log(f"synthetic Chung-Lu graph: {n} nodes, {edges.shape[1]} edges ({time.perf_counter() - t0:.1f} s)")
    t0 = time.perf_counter()
    graph = PPRGraph.from_edges(torch.from_numpy(edges), n, reorder=args.reorder)
    build_s = time.perf_counter() - t0
    log(f"PPRGraph.from_edges: {build_s:.1f} s  {graph}")
    reset_np = random_resets(n, args.queries, args.seed + 1).astype(np.float32)
    reset = torch.from_numpy(reset_np)
    stats = PPRStats()
    t0 = time.perf_counter()
    out = personalized_pagerank(graph, reset, damping=damping, stats=stats, method=args.method)
    secs = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    log(
        f"ours: {args.queries} queries in {secs:.1f} s, peak RSS {rss:.2f} GB, "
        f"{stats.column_iterations / args.queries:.1f} iterations/query"
    )
    k = args.large_igraph_queries
    t0 = time.perf_counter()
    g = igraph_graph(edges, n)
    log(f"igraph graph built in {time.perf_counter() - t0:.1f} s; timing {k} queries")
    ig_out, ig_time = igraph_run(g, reset_np[:k].astype(np.float64), damping)
    err = float(np.abs(out[:k].double().numpy() - ig_out).max())
    ig_per_q = ig_time / k
    res = {
        "nodes": n,
        "edges": int(edges.shape[1]),
        "arcs": graph.num_arcs,
        "build_seconds": build_s,
        "seconds": secs,
        "queries_per_s": args.queries / secs,
        "peak_rss_gb": rss,
        "igraph_s_per_query": ig_per_q,
        "igraph_est_speedup": ig_per_q * args.queries / secs,
        "max_abs_err": err,
        "gb_per_s": bytes_moved(graph, stats) / secs / 1e9,
    }
    table(
        f"Synthetic power-law graph, damping {damping}, {args.queries} queries",
        ["nodes", "edges", "ours s", "q/s", "peak RSS GB", "igraph s/q", "est. speedup", "max|err|"],
        [
            [
                f"{n:,}",
                f"{edges.shape[1]:,}",
                f"{secs:.1f}",
                f"{res['queries_per_s']:.1f}",
                f"{rss:.2f}",
                f"{ig_per_q:.2f}",
                f"{res['igraph_est_speedup']:.1f}x",
                f"{err:.1e}",
            ]
        ],
    )
    results["large_graph"] = res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument(
        "--damping", type=float, nargs="+", default=None,
        help="first one is the headline (default: the retriever's damping, then 0.85)",
    )
    p.add_argument("--musique-dir", default=str(REPO.parent / "shared" / "data" / "musique_dev"))
    p.add_argument("--large", action="store_true", help="also the 1M-node synthetic graph (minutes)")
    p.add_argument("--skip-retriever", action="store_true", help="no retriever's-graph row (no headline)")
    p.add_argument("--skip-stand-in", action="store_true", help="no stand-in-graph row")
    p.add_argument("--all-nodes", action="store_true",
                   help="retriever's graph: time the whole [B, N] answer, not the passages the retriever reads")
    p.add_argument("--ablate", action="store_true", help="time each optimisation switched off")
    p.add_argument(
        "--igraph-queries", type=int, default=200,
        help="columns igraph runs per graph, timed and checked (200: every one of the 51 questions ~4 times)",
    )
    p.add_argument("--large-nodes", type=int, default=1_000_000)
    p.add_argument("--large-edges", type=int, default=10_000_000)
    p.add_argument("--large-igraph-queries", type=int, default=10)
    p.add_argument("--gamma", type=float, default=2.5, help="degree exponent of the synthetic graph")
    p.add_argument("--passage-weight", type=float, default=0.0, help="stand-in: reset mass spread over passages")
    p.add_argument("--block-size", type=int, default=None)
    p.add_argument("--method", default="auto", choices=["auto", "power", "chebyshev"])
    p.add_argument("--reorder", action="store_true", help="stand-in and synthetic graphs in RCM order")
    p.add_argument("--threads", type=int, default=1, help="torch threads (igraph runs on one core)")
    p.add_argument("--repeats", type=int, default=5, help="timed igraph/ours pairs per damping")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.damping is None:
        from hyperrag.config import method_settings

        args.damping = list(dict.fromkeys([method_settings("hipporag2").damping, 0.85]))
    mkl = torch.backends.mkl.is_available()
    log(f"torch {torch.__version__}, {torch.get_num_threads()} threads, MKL {mkl}, load {os.getloadavg()}")
    results: dict = {}
    if not args.skip_retriever:
        bench_retriever(args, results, args.damping)
    if not args.skip_stand_in:
        bench_stand_in(args, results, args.damping)
    if args.large:
        bench_large(args, results, args.damping[0])
    head = results.get("retriever_graph", {}).get(str(args.damping[0]), {})
    summary = {
        k: head.get(k) for k in ("speedup_vs_igraph", "speedup_median_of_pairs", "max_abs_err", "queries_per_s",
                                 "iterations_per_query")
    }
    summary.update(
        graph="retriever_graph", damping=args.damping[0], queries=args.queries, threads=torch.get_num_threads(),
        load_average=os.getloadavg(), retriever_graph=results.get("retriever_graph"),
        stand_in=results.get("stand_in"),
    )
    if "ablation_ms_per_query" in results:
        summary["ablation_ms_per_query"] = results["ablation_ms_per_query"]
    summary["large_graph"] = results.get("large_graph")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
