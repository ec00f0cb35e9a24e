"""Incremental updates of a knowledge-graph index directory from the command line.

    python -m hyperrag.index build  --index DIR --corpus corpus.jsonl --openie openie.json
    python -m hyperrag.index build  --index DIR --corpus docs.jsonl [--chunk] [llm=local embedder=... ...]
    python -m hyperrag.index insert --index DIR --corpus new.jsonl --openie new_openie.json
    python -m hyperrag.index insert --index DIR --corpus raw.jsonl [llm=local ...]
    python -m hyperrag.index delete --index DIR --ids p07 p11      # or --ids-file ids.txt
    python -m hyperrag.index verify --index DIR
    python -m hyperrag.index refresh --index DIR --method hugrag [llm=none hardware=cpu ...]
    python -m hyperrag.index export --index DIR --format graphml|pyg|parquet --out PATH
    python -m hyperrag.index stats --index DIR [--top 10] [--json]

Retrieve over the result with ``python retrieve.py method=... index_dir=DIR``. ``refresh`` brings a method's
derived stages up to date right after an update, ahead of retrieval: it composes the ``retrieve`` config with
``method=<method> index_dir=DIR`` plus the Hydra-style overrides given, and runs the method's ``index()`` over the
index's passages (HugRAG: the hierarchy is updated locally, only changed modules' summaries and gates are
recomputed; the JSON line says what was loaded / updated / built).
``--openie`` is a HippoRAG-format file whose ``docs[i]`` belongs to the i-th (new) passage (write one
with :func:`hyperrag.llm.openie.run_openie`). Without it, the configured LLM extracts the triples (the ``retrieve``
config composed with the Hydra-style overrides given: ``llm=local`` by default; resumable, every reply cached;
lines that carry their own ``triples`` keep them; with ``llm=none`` passages enter without triples, counted as
``openie_skipped``), and ``insert`` chunks the documents as the index records (indexes built by the Python API or
``build --chunk``). ``insert`` embeds with the embedder the index records unless ``--embedder`` or an ``embedder=``
override says otherwise. Prints one JSON line (what changed, incl. the number of touched nodes); bad input prints
one line and exits 2.
``build``, ``insert``, ``delete`` and ``refresh`` are writers: each holds the index's lock
(:mod:`hyperrag.index.lock`) while it runs; a second writer of the same index waits up to ``--lock-timeout``
seconds (default ``index_lock.timeout_s``, hydra_configs/index_lock/) and then stops with one line naming the
holder, exit 2. ``verify``, ``stats`` and ``export`` read without waiting.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from hyperrag.errors import InputError, exit_on_input_error


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m hyperrag.index", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the knowledge-graph index of a corpus into DIR")
    build.add_argument("--index", required=True)
    build.add_argument("--corpus", required=True, help="JSONL: {id, title, text} per line")
    build.add_argument("--openie", default=None, help="HippoRAG-format OpenIE of the corpus (docs[i] = line i); "
                                                      "default: extract with the configured LLM")
    build.add_argument("--chunk", action="store_true", help="split long documents (hydra_configs/chunking) first")
    build.add_argument("--embedder", default=None, help="sentence-transformers model (default: the embedder config)")
    build.add_argument("--synonym-threshold", type=float, default=None, help="synonym edge cosine threshold")
    build.add_argument("overrides", nargs="*", help="Hydra-style overrides of the retrieve config, e.g. llm=none")
    ins = sub.add_parser("insert", help="add documents")
    ins.add_argument("--index", required=True)
    ins.add_argument("--corpus", required=True, help="JSONL: {id, title, text} per line")
    ins.add_argument("--openie", default=None, help="HippoRAG-format OpenIE of the new passages; default: extract "
                                                    "with the configured LLM")
    ins.add_argument("--embedder", default=None, help="sentence-transformers model (default: the one the index "
                                                      "records)")
    ins.add_argument("overrides", nargs="*", help="Hydra-style overrides of the retrieve config, e.g. llm=none")
    dele = sub.add_parser("delete", help="remove documents and everything only they support")
    dele.add_argument("--index", required=True)
    dele.add_argument("--ids", nargs="*", default=[])
    dele.add_argument("--ids-file", default=None, help="one passage id per line")
    ver = sub.add_parser("verify", help="check the manifest and every checksum")
    ver.add_argument("--index", required=True)
    exp = sub.add_parser("export", help="write the graph as GraphML, PyG HeteroData or Parquet tables")
    exp.add_argument("--index", required=True)
    exp.add_argument("--format", required=True, choices=["graphml", "pyg", "parquet"])
    exp.add_argument("--out", required=True, help="file (graphml, pyg) or folder (parquet)")
    st = sub.add_parser("stats", help="node/edge counts by type, degree distribution, largest hubs")
    st.add_argument("--index", required=True)
    st.add_argument("--top", type=int, default=10, help="hubs listed (default: %(default)s)")
    st.add_argument("--json", action="store_true", help="one JSON line instead of text")
    ref = sub.add_parser("refresh", help="update a method's derived stages (HugRAG hierarchy, summaries, gates)")
    ref.add_argument("--index", required=True)
    ref.add_argument("--method", default="hugrag", help="method config name (default: %(default)s)")
    ref.add_argument("overrides", nargs="*", help="Hydra-style overrides of the retrieve config, e.g. llm=none")
    for writer in (build, ins, dele, ref):
        writer.add_argument("--lock-timeout", type=float, default=None,
                            help="seconds to wait for another writer of the index (default: index_lock.timeout_s)")
    return ap.parse_args(argv)


WRITERS = ("build", "insert", "delete", "refresh")


def lock_timeout(args: argparse.Namespace) -> float | None:
    """How long this writer waits for the index's lock: ``--lock-timeout``, else the composed config's
    ``index_lock.timeout_s`` (overrides included), else (``delete``: no overrides) the YAML's."""
    if args.lock_timeout is not None:
        if args.lock_timeout < 0:
            raise InputError(f"must be >= 0, got {args.lock_timeout}", field="--lock-timeout")
        return args.lock_timeout
    overrides = list(getattr(args, "overrides", []) or [])
    if not any(o.lstrip("+~").startswith("index_lock") for o in overrides):
        return None
    if args.command == "refresh":
        overrides = [f"method={args.method}", *overrides]
    return float(_config(overrides).index_lock.timeout_s)


def refresh(index: str, method: str, overrides: list[str]) -> dict:
    """Compose ``retrieve`` with ``method=<method> index_dir=<index>`` (+ ``overrides``) and run its ``index()`` over
    the index's passages; return what it loaded / updated / built."""
    import time

    from hydra.utils import instantiate

    from hyperrag.data.types import Corpus, Dataset
    from hyperrag.index.passages import dataset_for_index
    from hyperrag.llm import build_llm
    from hyperrag.runners.prepare import build_retriever

    path = Path(index)
    if not path.is_dir():
        raise InputError("index directory not found (build one with `python -m hyperrag.index build`)", path=path,
                         field="--index")
    cfg = _config([f"method={method}", f"index_dir={path.resolve()}", *overrides])  # unknown choices: one line
    dataset = dataset_for_index(Dataset(f"index:{path.name}", Corpus([]), []), path)
    encoder = instantiate(cfg.embedder)
    with build_llm(cfg.llm) as llm:
        retriever = build_retriever(instantiate(cfg.method.retriever), encoder, llm, str(path.resolve()),
                                    device=cfg.hardware.device)
        t0 = time.perf_counter()
        retriever.index(dataset)
        seconds = time.perf_counter() - t0
    out = {"index": str(path), "method": cfg.method.name, "passages": len(dataset.corpus),
           "seconds": round(seconds, 3)}
    status = getattr(retriever, "hierarchy_status", None)
    if status:
        out.update(status)
    for name in ("summary_stats", "gate_stats"):
        stats = getattr(retriever, name, None)
        if stats:
            out[name] = stats
    return out


def _config(overrides: list[str]) -> object:
    """The ``retrieve`` config with ``overrides`` (the LLM, the embedder, chunking, ...), checked."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from hyperrag.config import compose_config
    from hyperrag.runners.run_settings import check_retrieve_config

    try:
        cfg = compose_config("retrieve", ["tracking=none", *overrides])
    except (HydraException, OmegaConfBaseException) as err:
        raise InputError(f"cannot compose the config: {str(err).splitlines()[0]}", field="overrides") from None
    check_retrieve_config(cfg)
    return cfg


def build(args: argparse.Namespace) -> dict:
    """``build``: from an OpenIE file, or extracting the triples with the configured LLM."""
    from hydra.utils import instantiate

    from hyperrag.embedding.encoder import TextEncoder
    from hyperrag.index.kg_index import build_kg_directory, graph_settings

    cfg = _config(list(args.overrides))
    settings = graph_settings(**({} if args.synonym_threshold is None
                                 else {"synonym_threshold": args.synonym_threshold}))
    encoder = TextEncoder(args.embedder, show_progress=False) if args.embedder else instantiate(cfg.embedder)
    if args.openie:
        from hyperrag.data.jsonl import read_jsonl_corpus

        corpus = read_jsonl_corpus(args.corpus)
        if not Path(args.openie).is_file():
            raise InputError("OpenIE file not found", path=args.openie)
        kg = build_kg_directory(args.index, corpus, args.openie, encoder, settings)
        extraction = None
    else:
        from hyperrag.index.chunking import read_documents
        from hyperrag.index.documents import build_from_documents
        from hyperrag.llm import build_llm

        docs = read_documents(Path(args.corpus))
        with build_llm(cfg.llm) as llm:
            kg, extraction = build_from_documents(args.index, docs, instantiate(cfg.chunking) if args.chunk else None,
                                                  encoder, settings, llm, cfg.cache_dir)
    out = {"built": kg.built, "index": str(kg.directory), "passages": kg.graph.num_passages,
           "nodes": kg.graph.num_nodes, "edges": kg.graph.num_edges}
    return {**out, "extraction": extraction} if extraction is not None else out


def insert(args: argparse.Namespace) -> dict:
    """``insert``: with an OpenIE file, or extracting the triples with the configured LLM (chunked as the index)."""
    from hydra.utils import instantiate

    from hyperrag.embedding.encoder import TextEncoder
    from hyperrag.index.store import IndexDirectory

    cfg = _config(list(args.overrides))
    manifest = IndexDirectory(args.index).manifest() or {}
    inputs = manifest.get("inputs", {})
    override = any(o.lstrip("+~").startswith("embedder") for o in args.overrides)
    if args.embedder:
        encoder = TextEncoder(args.embedder, show_progress=False)
    elif override:
        encoder = instantiate(cfg.embedder)
    elif inputs.get("embedder"):  # the embedder the index was built with, as it recorded it
        encoder = instantiate({**inputs["embedder"], "cache_dir": cfg.cache_dir})
    else:  # an index from before the embedder was recorded: its sentence-transformers model
        encoder = TextEncoder(inputs.get("encoder_model") or "all-MiniLM-L6-v2", show_progress=False)
    if args.openie:
        from hyperrag.data.jsonl import read_jsonl_corpus
        from hyperrag.data.openie import read_openie
        from hyperrag.index.update import insert_documents

        corpus = read_jsonl_corpus(args.corpus)
        return insert_documents(args.index, corpus, read_openie(args.openie, corpus), encoder).summary()
    from hyperrag.index.chunking import read_documents
    from hyperrag.index.documents import index_chunking, insert_from_documents
    from hyperrag.llm import build_llm

    if not manifest:
        raise InputError("index directory not found or incomplete (no manifest)", path=args.index, field="--index")
    docs = read_documents(Path(args.corpus))
    with build_llm(cfg.llm) as llm:
        result, extraction = insert_from_documents(args.index, docs, index_chunking(manifest), encoder, llm,
                                                   cfg.cache_dir, source=str(args.corpus))
    return {**result.summary(), "extraction": extraction}


@exit_on_input_error
def main(argv: list[str] | None = None) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = parse_args(argv)
    from hyperrag.utils.console import configure_console

    if args.command == "refresh":  # a method's stages may train with Lightning: its own console handler goes too
        import lightning  # noqa: F401
    configure_console()  # warnings and errors only (each command's result is its JSON line)
    if args.command in WRITERS:  # one writer per index: held for the whole command
        from hyperrag.index.lock import index_writer

        command = "python -m hyperrag.index " + " ".join(sys.argv[1:] if argv is None else argv)
        with index_writer(args.index, lock_timeout(args), command, create=args.command == "build"):
            out = run_command(args)
    else:
        out = run_command(args)
    if args.command != "stats" or args.json:  # stats without --json printed its text
        print(json.dumps(out))
    return out


def run_command(args: argparse.Namespace) -> dict:
    """The command's result (its JSON line; ``stats`` without ``--json`` prints its text too)."""
    if args.command == "build":
        out = build(args)
    elif args.command == "verify":
        from hyperrag.index.kg_index import load_kg_directory

        kg = load_kg_directory(args.index)
        out = {"ok": True, "nodes": kg.graph.num_nodes, "edges": kg.graph.num_edges}
    elif args.command == "export":
        from hyperrag.interop.export import export_index

        out = export_index(args.index, args.format, args.out)
    elif args.command == "stats":
        from hyperrag.graph.stats import format_statistics, graph_statistics
        from hyperrag.index.kg_index import load_kg_directory

        out = graph_statistics(load_kg_directory(args.index).graph, top=args.top)
        if not args.json:
            print(format_statistics(out))
    elif args.command == "refresh":
        out = refresh(args.index, args.method, list(args.overrides))
    elif args.command == "delete":
        from hyperrag.index.update import delete_documents

        ids = list(args.ids)
        if args.ids_file:
            path = Path(args.ids_file)
            if not path.is_file():
                raise InputError("file not found", path=path)
            ids += [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
                    if line.strip()]
        if not ids:
            raise InputError("no passage ids given", field="--ids")
        out = delete_documents(args.index, ids).summary()
    else:
        out = insert(args)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
