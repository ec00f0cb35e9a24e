"""Cold index cost of LinearRAG against HippoRAG 2 on the same spaCy pipeline, on the same machine and passages.

    python benchmarks/bench_linearrag_index.py [--data-config musique|2wiki] [--passages 400] [--repeats 2]
        [--arms linearrag:ner linearrag:full hipporag2:spacy] [--out FILE]

Each arm indexes the first ``--passages`` passages of the dataset from nothing: a fresh ``HYPERRAG_CACHE`` (no
embedding, spaCy, OpenIE or index cache), so every stage is paid — HippoRAG 2's spaCy parse and triples
(``extractor=spacy``, which ``retrieve.py`` runs before ``index()``) and its ``index()`` (entity / fact / passage
embedding, synonym kNN, graph); LinearRAG's ``index()`` (spaCy NER, entity / sentence / passage embedding, mention
matrices, graph). The spaCy pipelines and MiniLM are loaded before the clock starts (one load per process, not an
index cost). Arms run in turn, their order rotated each repeat, so a load swing on the shared machine falls on
every arm.

Reported per arm and repeat: wall seconds, process CPU seconds (``time.process_time``: all threads of this
process; on a machine shared with other jobs CPU seconds move far less with the load than wall seconds), the
encoder's share (``encode_seconds``) and the texts it embedded. The ratio LinearRAG / HippoRAG 2 is the mean of
each repeat's ratio. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def subset(dataset, n: int):  # noqa: ANN001, ANN201 - a Dataset in, a Dataset out
    """The dataset's first ``n`` passages, no questions (index cost only)."""
    import dataclasses

    from hyperrag.data.types import Corpus

    passages = dataset.corpus.passages[:n]
    return dataclasses.replace(dataset, corpus=Corpus(passages), queries=[])


def index_arm(arm: str, dataset, root: Path, model) -> dict:  # noqa: ANN001
    """Index ``dataset`` from nothing under cache root ``root`` with ``arm`` (``method:variant``); timings.
    ``model``: the loaded sentence-transformer (an empty embedding cache, the model not loaded again)."""
    from hyperrag.config import method_settings
    from hyperrag.config.compose import configured
    from hyperrag.embedding import TextEncoder
    from hyperrag.runners.prepare import build_retriever, prepare_dataset, retriever_class

    method, variant = arm.split(":")
    os.environ["HYPERRAG_CACHE"] = str(root)  # what ${cache_dir} resolves to in the composed settings
    if method == "linearrag":
        settings = method_settings("linearrag", ner_components=variant, index_root=str(root / "index"))
        extractor = None
    else:
        settings = method_settings(method, index_root=str(root / "index"))
        extractor = configured("extractor", config_overrides=(f"extractor={variant}",))
    encoder = TextEncoder(cache_dir=root)
    encoder._model = model
    wall0, cpu0 = time.perf_counter(), time.process_time()
    data = prepare_dataset(dataset, None, root, extraction=getattr(settings, "extraction", None),
                           extractor=extractor, uses_triples=retriever_class(settings).uses_triples)
    extract_wall = time.perf_counter() - wall0
    retriever = build_retriever(settings, encoder, None, device="cpu")
    retriever.index(data)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {"arm": arm, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "extraction_wall_s": round(extract_wall, 2),
            "encode_s": round(encoder.encode_seconds, 2), "texts_encoded": encoder.encoded_count,
            "stages": getattr(retriever, "index_seconds", None)}


def warm_models():  # noqa: ANN201 - the sentence-transformer
    """Load both spaCy component sets and MiniLM once, outside the clock; the loaded MiniLM."""
    from hyperrag.embedding import TextEncoder
    from hyperrag.extraction.spacy_pipeline import load_pipeline

    load_pipeline()
    load_pipeline(components="ner")
    with tempfile.TemporaryDirectory() as tmp:
        encoder = TextEncoder(cache_dir=tmp)
        encoder.encode(["warm-up"])
        return encoder.model


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-config", default="musique")
    ap.add_argument("--passages", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--arms", nargs="+", default=["linearrag:ner", "linearrag:full", "hipporag2:spacy"])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from hydra.utils import instantiate

    from hyperrag.config.compose import compose_config

    cfg = compose_config("retrieve", (f"data={args.data_config}",))
    dataset = subset(instantiate(cfg.data), args.passages)
    model = warm_models()
    rows = []
    for rep in range(args.repeats):
        k = rep % len(args.arms)
        for arm in args.arms[k:] + args.arms[:k]:
            root = Path(tempfile.mkdtemp(prefix="bench_linearrag_"))
            try:
                row = {"repeat": rep, **index_arm(arm, dataset, root, model)}
            finally:
                shutil.rmtree(root, ignore_errors=True)
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary: dict = {"data": args.data_config, "passages": len(dataset.corpus.passages), "repeats": args.repeats,
                     "rows": rows}
    base = [a for a in args.arms if a.startswith("hipporag2")]
    for arm in args.arms:
        mine = [r for r in rows if r["arm"] == arm]
        summary[arm] = {k: round(statistics.mean(r[k] for r in mine), 2) for k in ("wall_s", "cpu_s", "encode_s")}
        summary[arm]["texts_encoded"] = mine[0]["texts_encoded"]
        if base and arm != base[0]:
            ref = {r["repeat"]: r for r in rows if r["arm"] == base[0]}
            for k in ("wall_s", "cpu_s"):
                summary[arm][f"{k}_ratio_vs_{base[0]}"] = round(
                    statistics.mean(r[k] / ref[r["repeat"]][k] for r in mine), 3)
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}))


if __name__ == "__main__":
    main()
