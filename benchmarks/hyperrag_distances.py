"""HyperRAG's Table 3 on musique_dev: hyperbolic vs Euclidean distances from sampled questions to passages.

    python benchmarks/hyperrag_distances.py [--queries 20] [--seed 0] [--llm none|oracle] [--out reports/...]
    python benchmarks/hyperrag_distances.py --paper-data DIR --dataset musique   # the paper's files

The ball is the one ``retrieve.py method=hyperrag data=musique`` uses (loaded from ``models/`` or trained with
``method/hyperrag.yaml``'s settings); ``--queries`` questions are sampled at random (``--seed``) and placed in the
ball by the paper's rule (projected). Writes the markdown report (:mod:`hyperrag.hyperbolic.distance_stats`)
and prints one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.hyperbolic.distance_stats import distance_table, markdown
from hyperrag.retrievers.hyperrag import HyperRAGRetriever


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--musique-dir", default=os.environ.get("MUSIQUE_DIR", ROOT.parent / "shared" / "data" / "musique_dev"))
    ap.add_argument("--paper-data", default=None, help="read --dataset from this paper_data directory instead")
    ap.add_argument("--dataset", default="musique", help="the paper dataset under --paper-data")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm", choices=("none", "oracle"), default="none", help="who built the query graphs")
    ap.add_argument("--out", default=str(ROOT / "reports" / "hyperrag_distances.md"))
    args = ap.parse_args()

    if args.paper_data:  # the paper's own files (docs/reproduce.md), in their downloaded layout
        from hyperrag.data.paper_data import paper_dataset

        ds = paper_dataset(args.paper_data, args.dataset)
    else:
        ds = musique_dataset(args.musique_dir)
    cache = Path(os.environ.get("HYPERRAG_CACHE", Path.home() / ".cache" / "hyperrag"))
    encoder = TextEncoder(cache_dir=cache, show_progress=False)
    llm = None
    if args.llm == "oracle":
        from hyperrag.llm import build_llm

        llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "gold_answers", "cache_path": None, "show_usage": False},
                        ds).start()
    settings = method_settings("hyperrag", index_root=str(cache / "index"),
                               models_dir=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    r = HyperRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
    r.index(ds)
    questions = [q.question for q in random.Random(args.seed).sample(list(ds.queries), args.queries)]
    q_emb = encoder.encode(questions)
    ball = r.ball
    table = distance_table(ball.points(q_emb), ball.model.points[: ball.graph.num_passages], q_emb,
                           ball.table.embeddings, ball.model.curvature)
    title = (f"HyperRAG Table 3 on {ds.name}: {args.queries} sampled questions (seed {args.seed}), "
             f"query graphs {'LLM-free' if llm is None else 'upper bound (oracle)'}, ball {r.info['checkpoint']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(markdown(table, title))
    print(markdown(table, title))
    print(json.dumps({"bench": "hyperrag_distances", "queries": args.queries, "seed": args.seed, "llm": args.llm,
                      "report": str(out), **table}))


if __name__ == "__main__":
    main()
