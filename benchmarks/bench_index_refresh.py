"""HugRAG over an index directory on MuSiQue: ``refresh`` after insert / delete vs a fresh build (issue 9 item 3).

    python benchmarks/bench_index_refresh.py [--fraction 0.05] [--seed 0]

musique_dev's passages are split at random (``--seed``): the base corpus (all but ``--fraction``) is built into
an index directory (``build_kg_directory``, the dataset's OpenIE file), and HugRAG's derived stages are built
by ``python -m hyperrag.index refresh`` (in process: :func:`hyperrag.index.__main__.refresh`, ``llm=none``,
default HugRAG settings). Then:

* **insert**: the held-out passages are inserted (``insert_documents``) and ``refresh`` updates the hierarchy
  locally; against it, a fresh index of the same final corpus built from scratch and refreshed (a full build);
* **delete**: ``--fraction`` of the final corpus (at random) is deleted (``delete_documents``) and ``refresh``
  updates again; against it, a fresh index of the remaining corpus.

Reported per step: refresh seconds (dedup + hierarchy + module texts and their embeddings + scorers; each full
build starts from a copy of the sentence-embedding cache as it was before the update's refresh, so both sides
reuse the embeddings of texts that did not change and neither profits from the other), hierarchy ``built`` /
``updated``,
modules kept / recomputed (a recomputed module is one summary request and its gate candidates with an LLM),
touched entities. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperrag.data import musique_dataset
from hyperrag.data.musique import load_json
from hyperrag.data.openie import read_openie
from hyperrag.data.types import Corpus
from hyperrag.embedding import TextEncoder
from hyperrag.index.__main__ import refresh
from hyperrag.index.kg_index import build_kg_directory, graph_settings
from hyperrag.index.update import delete_documents, insert_documents

KEEP = ("hierarchy", "modules", "modules_kept", "modules_recomputed", "touched_entities", "entities", "seconds")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--fraction", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    ds = musique_dataset(Path(args.data) / "musique_dev")
    passages = ds.corpus.passages
    docs = load_json(ds.openie_path)["docs"]
    assert len(docs) == len(passages)
    rng = random.Random(args.seed)
    n_new = max(1, round(args.fraction * len(passages)))
    held = set(rng.sample(range(len(passages)), n_new))
    base_pos = [i for i in range(len(passages)) if i not in held]
    new_pos = sorted(held)
    final_pos = base_pos + new_pos  # index order after the insert
    gone = set(rng.sample(final_pos, n_new))
    remaining_pos = [i for i in final_pos if i not in gone]

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache = tmp / "cache"
        encoder = TextEncoder(cache_dir=cache, show_progress=False)

        def overrides(cache_dir: Path) -> list[str]:
            return ["llm=none", "hardware=cpu", "tracking=none", f"cache_dir={cache_dir}"]

        def files(name: str, positions: list[int]) -> tuple[Corpus, Path]:
            corpus = Corpus([passages[i] for i in positions], source=f"{ds.corpus.source} ({name})")
            path = tmp / f"{name}_openie.json"
            path.write_text(json.dumps({"docs": [docs[i] for i in positions]}), encoding="utf-8")
            return corpus, path

        def timed_refresh(index: Path, cache_dir: Path = cache) -> dict:
            t0 = time.perf_counter()
            out = refresh(str(index), "hugrag", overrides(cache_dir))
            return {**{k: out[k] for k in KEEP if k in out}, "refresh_s": round(time.perf_counter() - t0, 2)}

        def snapshot(name: str) -> Path:  # the embedding cache as it is now, for a full build to start from
            return Path(shutil.copytree(cache, tmp / f"cache-{name}"))

        def fresh(name: str, positions: list[int], cache_dir: Path) -> dict:
            corpus, openie = files(name, positions)
            build_kg_directory(tmp / name, corpus, openie, TextEncoder(cache_dir=cache_dir, show_progress=False),
                               graph_settings())
            return timed_refresh(tmp / name, cache_dir)

        log(f"base: {len(base_pos)} passages (index build + first refresh, cold caches)")
        index = tmp / "index"
        base_corpus, base_openie = files("base", base_pos)
        t0 = time.perf_counter()
        build_kg_directory(index, base_corpus, base_openie, encoder, graph_settings())
        build_s = time.perf_counter() - t0
        base = timed_refresh(index)

        log(f"insert {len(new_pos)} passages + refresh")
        new_corpus, new_openie = files("new", new_pos)
        t0 = time.perf_counter()
        insert_documents(index, new_corpus, read_openie(new_openie, new_corpus), encoder)
        insert_s = time.perf_counter() - t0
        before_insert = snapshot("final")
        inserted = timed_refresh(index)
        log("full build of the final corpus")
        inserted_full = fresh("final", final_pos, before_insert)

        log(f"delete {len(gone)} passages + refresh")
        t0 = time.perf_counter()
        delete_documents(index, [passages[i].id for i in sorted(gone)])
        delete_s = time.perf_counter() - t0
        before_delete = snapshot("remaining")
        deleted = timed_refresh(index)
        log("full build of the remaining corpus")
        deleted_full = fresh("remaining", remaining_pos, before_delete)

    def row(update: dict, full: dict, kg_update_s: float) -> dict:
        return {"kg_update_s": round(kg_update_s, 2), "refresh": update, "full_build": full,
                "refresh_speedup": round(full["refresh_s"] / max(update["refresh_s"], 1e-9), 2),
                "modules_recomputed_share": round(update["modules_recomputed"] / max(update["modules"], 1), 3)}

    print(json.dumps({"bench": "index_refresh", "method": "hugrag", "passages": len(passages),
                      "base_passages": len(base_pos), "inserted": len(new_pos), "deleted": len(gone),
                      "seed": args.seed, "base_build_s": round(build_s, 2), "base_refresh": base,
                      "insert": row(inserted, inserted_full, insert_s),
                      "delete": row(deleted, deleted_full, delete_s)}))


if __name__ == "__main__":
    main()
