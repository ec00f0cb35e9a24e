"""Cold index cost of LinearRAG against HippoRAG 2 on the same spaCy pipeline — and against HippoRAG 2 with its LLM
OpenIE (the authors' comparison) — on the same machine and passages.

    python benchmarks/bench_linearrag_index.py [--data-config musique|2wiki] [--passages 400] [--repeats 2]
        [--arms linearrag:ner linearrag:full hipporag2:spacy [hipporag2:llm]] [--llm local] [--out FILE]

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

Arm ``hipporag2:llm``: HippoRAG 2 with its LLM OpenIE (``extractor=llm``, the dataset's released OpenIE file not
read: ``openie_source=llm``), the LLM being ``--llm`` (default ``local``: the embedded SmolLM2-135M-Instruct served
by llama-cpp-python's OpenAI-compatible HTTP server, started as ``retrieve.py llm=local`` starts it — a
plumbing-quality model; a GPT-4o-mini API or vLLM would differ). The server is started once, before the clock (a
model load, like spaCy's and MiniLM's), with no response cache (``llm.cache_path=null``: every request is paid).
Besides this process's CPU seconds, the arm records the server process's CPU seconds (``server_cpu_s``: user +
system of its process from ``/proc/<pid>/stat``, all its threads), their sum (``total_cpu_s``), the LLM calls,
requests, prompt / completion tokens (the server's own ``usage`` counts) and the OpenIE file's passages without
triples. Every other arm records ``llm_calls`` 0 and zero tokens. Ratios against ``hipporag2:llm`` use
``total_cpu_s`` (both processes).
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


def subset(dataset, n: int):
    """The dataset's first ``n`` passages, no questions (index cost only)."""
    import dataclasses

    from hyperrag.data.types import Corpus

    passages = dataset.corpus.passages[:n]
    return dataclasses.replace(dataset, corpus=Corpus(passages), queries=[])


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (all its threads; its reaped children too), from
    ``/proc/<pid>/stat``; ``None`` where that cannot be read (not Linux, the process gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": field 3 (state) is fields[0]
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")


def llm_usage(llm) -> dict[str, int]:
    """The LLM's counters summed over its tasks: calls, requests, prompt and completion tokens (zeros without one)."""
    tasks = getattr(getattr(llm, "accounting", None), "tasks", {}) or {}
    return {k: sum(getattr(t, k) for t in tasks.values())
            for k in ("calls", "requests", "prompt_tokens", "completion_tokens", "failed")}


def usage_since(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {f"llm_{k}": after[k] - before.get(k, 0) for k in after}


def server_pid(llm) -> int | None:
    """The managed server's process id (``llm=local`` / ``vllm``), ``None`` for an endpoint we did not start."""
    proc = getattr(getattr(llm, "server", None), "proc", None)
    return getattr(proc, "pid", None)


def openie_summary(path) -> dict[str, int]:
    """Passages, passages without a triple, failed passages and triples of an OpenIE file."""
    if path is None or not Path(path).is_file():
        return {}
    docs = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = docs.get("docs", [])
    return {"openie_passages": len(rows), "openie_failed": len(docs.get("failed_idx") or []),
            "openie_no_triple": sum(1 for d in rows if not d.get("extracted_triples")),
            "openie_triples": sum(len(d.get("extracted_triples") or []) for d in rows)}


def index_arm(arm: str, dataset, root: Path, model, llm=None) -> dict:
    """Index ``dataset`` from nothing under cache root ``root`` with ``arm`` (``method:variant``); timings.
    ``model``: the loaded sentence-transformer (an empty embedding cache, the model not loaded again). ``llm``: the
    started LLM of a ``hipporag2:llm`` arm (its OpenIE runs inside the clock; ignored by the other arms)."""
    import dataclasses

    from hyperrag.config import method_settings
    from hyperrag.config.compose import configured
    from hyperrag.embedding import TextEncoder
    from hyperrag.runners.prepare import build_retriever, prepare_dataset, retriever_class

    method, variant = arm.split(":")
    os.environ["HYPERRAG_CACHE"] = str(root)  # what ${cache_dir} resolves to in the composed settings
    uses_llm = method != "linearrag" and variant == "llm"
    if method == "linearrag":
        settings = method_settings("linearrag", ner_components=variant, index_root=str(root / "index"))
        extractor = None
    else:
        settings = method_settings(method, index_root=str(root / "index"))
        extractor = configured("extractor", config_overrides=(f"extractor={variant}",))
    if uses_llm:
        if llm is None:
            raise SystemExit(f"arm {arm} needs an LLM (--llm)")
        dataset = dataclasses.replace(dataset, openie_source="llm")  # extract; never read a released file
    else:
        llm = None
    encoder = TextEncoder(cache_dir=root)
    encoder._model = model
    pid = server_pid(llm)
    usage0, server0 = llm_usage(llm), (process_cpu_seconds(pid) if pid else None)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    cls = retriever_class(settings)
    data = prepare_dataset(dataset, llm, root, extraction=getattr(settings, "extraction", None),
                           extractor=extractor, uses_triples=cls.uses_triples, own_extraction=cls.own_extraction())
    extract_wall = time.perf_counter() - wall0
    retriever = build_retriever(settings, encoder, llm, device="cpu")
    retriever.index(data)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    server1 = process_cpu_seconds(pid) if pid else None
    server_cpu = round(server1 - server0, 2) if server0 is not None and server1 is not None else None
    row = {"arm": arm, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "extraction_wall_s": round(extract_wall, 2),
           "encode_s": round(encoder.encode_seconds, 2), "texts_encoded": encoder.encoded_count,
           "server_cpu_s": server_cpu if uses_llm else 0.0,
           "total_cpu_s": round(cpu + (server_cpu or 0.0), 2),
           **usage_since(llm_usage(llm), usage0),
           "extraction": (data.extraction or {}).get("source"),
           "stages": getattr(retriever, "index_seconds", None)}
    if uses_llm:
        row.update(openie_summary(data.openie_path))
    return row


def start_llm(name: str, data_config: str):
    """The ``llm=<name>`` backend of ``retrieve.py``, started (a ``local`` server comes up here, outside the clock),
    without a response cache (every request is paid)."""
    from hyperrag.config.compose import compose_config
    from hyperrag.llm import build_llm

    cfg = compose_config("retrieve", (f"data={data_config}", f"llm={name}", "llm.cache_path=null",
                                      "llm.show_usage=false"))
    return build_llm(cfg.llm).start()


def warm_models():
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
    ap.add_argument("--llm", default="local", help="the LLM of the hipporag2:llm arm (retrieve.py's llm=...)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from hydra.utils import instantiate

    from hyperrag.config.compose import compose_config

    cfg = compose_config("retrieve", (f"data={args.data_config}",))
    dataset = subset(instantiate(cfg.data), args.passages)
    model = warm_models()
    llm, llm_start_s = None, None
    if any(a.endswith(":llm") for a in args.arms):
        t0 = time.perf_counter()
        llm = start_llm(args.llm, args.data_config)
        llm_start_s = round(time.perf_counter() - t0, 2)
    rows = []
    try:
        for rep in range(args.repeats):
            k = rep % len(args.arms)
            for arm in args.arms[k:] + args.arms[:k]:
                root = Path(tempfile.mkdtemp(prefix="bench_linearrag_"))
                try:
                    row = {"repeat": rep, **index_arm(arm, dataset, root, model, llm)}
                finally:
                    shutil.rmtree(root, ignore_errors=True)
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        if llm is not None:
            llm.stop()
    summary = summarise(rows, args.arms)
    summary = {"data": args.data_config, "passages": len(dataset.corpus.passages), "repeats": args.repeats,
               "llm": (f"{args.llm}: {getattr(llm, 'model', None)}" if llm is not None else None),
               "llm_start_s": llm_start_s, "cpu_count": os.cpu_count(), **summary, "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}))


MEANS = ("wall_s", "cpu_s", "server_cpu_s", "total_cpu_s", "encode_s", "llm_calls", "llm_prompt_tokens",
         "llm_completion_tokens")


def summarise(rows: list[dict], arms: list[str]) -> dict:
    """Per arm: the mean over repeats of each timing and count (``MEANS``), the texts embedded, and each other
    arm's ratio to every HippoRAG 2 arm (the mean of the per-repeat ratios of wall, process CPU and total CPU
    seconds — the total counts a managed LLM server's CPU too)."""
    out: dict = {}
    bases = [a for a in arms if a.startswith("hipporag2")]
    for arm in arms:
        mine = [r for r in rows if r["arm"] == arm]
        out[arm] = {k: round(statistics.mean((r.get(k) or 0) for r in mine), 2) for k in MEANS}
        out[arm]["texts_encoded"] = mine[0]["texts_encoded"]
        for base in bases:
            if base == arm:
                continue
            ref = {r["repeat"]: r for r in rows if r["arm"] == base}
            for k in ("wall_s", "cpu_s", "total_cpu_s"):
                out[arm][f"{k}_ratio_vs_{base}"] = round(
                    statistics.mean(r[k] / ref[r["repeat"]][k] for r in mine), 3)
    return out


if __name__ == "__main__":
    main()
