"""Incremental CDF-RAG causal index vs a full rebuild, on MuSiQue: insert 5 % of the passages.

    python benchmarks/bench_causal_update.py [--holdout 0.05] [--seed 0] [--limit 0] [--repeats 3]
    python benchmarks/bench_causal_update.py --classifier random   # a (random-weight) pair classifier scores

The passages are split at random (``--seed``): the base corpus (95 %) gets its causal index built from scratch
(:func:`load_or_build_causal_index`, no LLM, the OpenIE triples of the dataset's GPT-3.5 file; rule priors, or
with ``--classifier random`` a :class:`CausalPairClassifier` checkpoint with random head weights — the compute
of a trained one, not its quality); the held-out passages are then appended and the index updated
incrementally (records of the base passages reused, only the new ones mined and scored, the graph assembled
again). The full rebuild builds the index of the same final corpus into an empty root. Both start from the
sentence-embedding cache as the base build left it (the base's causal nodes cached, the new ones not).
``identical`` compares the two graphs (node names, edges, weights, passages, provenance, alias links,
embeddings). Times are medians of ``--repeats`` runs (the incremental index is removed between runs, the base
kept). ``--limit N`` uses the first N passages only (reported). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch

from hyperrag.causal.graph import CausalGraph, load_or_build_causal_index
from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.data.openie import read_openie
from hyperrag.data.types import Corpus
from hyperrag.embedding import TextEncoder
from hyperrag.embedding.cache import EmbeddingCache


def random_classifier(path: Path) -> Path:
    """A loadable pair-classifier checkpoint with random head weights (MiniLM encoder as packaged)."""
    import lightning as L

    from hyperrag.causal.classifier import CausalPairClassifier
    from hyperrag.config import task_arguments

    torch.manual_seed(0)
    model = CausalPairClassifier(**task_arguments("causal_pair"))
    ckpt = {
        "state_dict": model.state_dict(),
        "hyper_parameters": dict(model.hparams),
        "pytorch-lightning_version": L.__version__,
    }
    torch.save(ckpt, path)
    return path


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def same_graph(a: CausalGraph, b: CausalGraph) -> bool:
    return (
        a.node_names == b.node_names
        and a.passage_ids == b.passage_ids
        and torch.equal(a.edge_index, b.edge_index)
        and torch.equal(a.edge_passage, b.edge_passage)
        and torch.equal(a.edge_weight, b.edge_weight)
        and a.edge_info == b.edge_info
        and torch.equal(a.alias_index, b.alias_index)
        and torch.allclose(a.alias_weight, b.alias_weight, atol=1e-5)
        and torch.allclose(a.node_emb, b.node_emb, atol=1e-5)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--musique-dir",
        default=os.environ.get("MUSIQUE_DIR", ROOT.parent / "shared" / "data" / "musique_dev"),
    )
    ap.add_argument("--holdout", type=float, default=0.05, help="share of the passages inserted")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0, help="first N passages only (0 = all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--classifier", choices=["none", "random"], default="none")
    args = ap.parse_args()

    ds = musique_dataset(args.musique_dir)
    triples = read_openie(ds.openie_path, ds.corpus).triples
    passages = list(ds.corpus.passages)
    if args.limit:
        passages, triples = passages[: args.limit], triples[: args.limit]
    rng = random.Random(args.seed)
    held = set(rng.sample(range(len(passages)), max(1, round(args.holdout * len(passages)))))
    base_pos = [i for i in range(len(passages)) if i not in held]
    final_pos = base_pos + sorted(held)

    def subset(positions: list[int]):
        corpus = Corpus([passages[i] for i in positions], source=f"{ds.corpus.source} (subset)")
        return dataclasses.replace(ds, corpus=corpus, queries=[], openie_path=None), [
            triples[i] for i in positions
        ]

    base_ds, base_triples = subset(base_pos)
    final_ds, final_triples = subset(final_pos)
    settings = method_settings("cdfrag").causal
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        encoder = TextEncoder(
            cache_dir=tmp / "emb", show_progress=False
        )  # cold: the base build embeds its nodes
        ckpt = random_classifier(tmp / "pair.ckpt") if args.classifier == "random" else None

        def build(dataset, trip, root: Path):
            t0 = time.perf_counter()
            index = load_or_build_causal_index(
                dataset, encoder, settings, classifier_path=ckpt, root=root, openie_triples=trip
            )
            return index, time.perf_counter() - t0

        log(f"base build: {len(base_ds.corpus)} passages (cold embedding cache)")
        base, base_s = build(base_ds, base_triples, tmp / "idx")
        encoder.cache.close()
        snapshot = tmp / "emb-base.sqlite"
        shutil.copy(encoder.cache.path, snapshot)

        def restore_cache(tag: str) -> None:  # the embedding cache as the base build left it
            path = tmp / f"emb-{tag}.sqlite"
            shutil.copy(snapshot, path)
            encoder.cache = EmbeddingCache(path)

        inc_times, full_times = [], []
        inc = full = None
        for r in range(args.repeats):
            if inc is not None:
                shutil.rmtree(inc.directory)  # keep the base, redo the update
            log(f"[{r + 1}/{args.repeats}] incremental insert of {len(held)} passages")
            restore_cache(f"inc-{r}")
            inc, s = build(final_ds, final_triples, tmp / "idx")
            assert inc.base == base.directory, "the update did not start from the base index"
            inc_times.append(s)
            log(f"[{r + 1}/{args.repeats}] full rebuild of {len(final_ds.corpus)} passages")
            restore_cache(f"full-{r}")
            full, s = build(final_ds, final_triples, tmp / f"full-{r}")
            full_times.append(s)
        assert inc is not None and full is not None
        identical = same_graph(inc.graph, full.graph) and same_graph(
            CausalGraph.load(inc.directory), full.graph
        )
        inc_s, full_s = statistics.median(inc_times), statistics.median(full_times)
        g = inc.graph
        result = {
            "bench": "causal_update",
            "dataset": "musique_dev",
            "passages": len(final_ds.corpus),
            "sliced": bool(args.limit),
            "inserted": len(held),
            "classifier": None if ckpt is None else "random-weight CausalPairClassifier",
            "llm": None,
            "repeats": args.repeats,
            "base_build_cold_s": round(base_s, 2),
            "incremental_s": round(inc_s, 3),
            "full_rebuild_s": round(full_s, 3),
            "speedup": round(full_s / max(inc_s, 1e-9), 2),
            "incremental_runs_s": [round(t, 3) for t in inc_times],
            "full_runs_s": [round(t, 3) for t in full_times],
            "passages_computed": g.stats["passages_computed"],
            "passages_reused": g.stats["passages_reused"],
            "full_passages_computed": full.graph.stats["passages_computed"],
            "nodes": g.num_nodes,
            "edges": g.num_edges,
            "alias_links": g.stats["alias_links"],
            "pairs_scored_incremental": g.stats["pairs_scored"],
            "pairs_scored_full": full.graph.stats["pairs_scored"],
            "identical": identical,
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
