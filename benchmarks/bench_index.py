"""Knowledge-graph index build time on musique_dev with warm embedding caches, and the no-op rerun.

    python benchmarks/bench_index.py

Warms the embedding cache first (minutes, once per machine), then builds the index into a fresh
directory (timed), then asks for it again (timed; must load, encode nothing and rebuild nothing).
Last line: one JSON object.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.index.kg_index import graph_settings, load_or_build_kg_index


def main() -> None:
    ds = musique_dataset(os.environ.get("MUSIQUE_DIR", ROOT.parent / "shared" / "data" / "musique_dev"))
    encoder = TextEncoder(show_progress=True)
    with tempfile.TemporaryDirectory() as warm_root:  # warm the embedding cache (no-op when already warm)
        load_or_build_kg_index(ds, encoder, graph_settings(), root=warm_root)
    warm_encoded = encoder.encoded_count
    with tempfile.TemporaryDirectory() as root:
        t0 = time.perf_counter()
        built = load_or_build_kg_index(ds, encoder, graph_settings(), root=root)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = load_or_build_kg_index(ds, encoder, graph_settings(), root=root)
        reload_s = time.perf_counter() - t0
    result = {"build_seconds_warm_embeddings": round(build_s, 2), "reload_seconds": round(reload_s, 3),
              "rebuilt_on_rerun": again.built, "texts_encoded_after_warmup": encoder.encoded_count - warm_encoded,
              "texts_encoded_during_warmup": warm_encoded, **{k: built.graph.stats[k] for k in
                                                            ("nodes", "entities", "facts", "edges")},
              "edges_by_type": built.graph.stats["edges_by_type"], "stage_seconds": built.graph.stats["seconds"]}
    print(f"build (embeddings cached): {build_s:.2f} s   rerun: {reload_s:.3f} s, rebuilt={again.built}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
