"""The knowledge-graph index of a dataset: graph tensors + entity/fact/passage embeddings + provenance.

Cached by key (corpus, OpenIE file, encoder, settings). Files: ``graph.pt``/``graph.json`` and
``provenance.pt`` and ``passages.jsonl`` (stage ``graph``), ``embeddings.pt`` (stage ``embeddings``), then
``manifest.json``. :func:`build_kg_directory` builds one into a folder of your choice (``python -m
hyperrag.index build``); :func:`load_kg_directory` loads any built or updated one.
A corrupted or truncated file is detected on load; both stages are cheap to redo (embeddings come
from the on-disk encoder cache), so :func:`load_or_build_kg_index` rebuilds the index with a warning
naming the file, or raises :class:`~hyperrag.index.store.IndexCorruptError` with ``on_corrupt="raise"``.
Incremental insert/delete of documents lives in :mod:`hyperrag.index.update`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import torch

from hyperrag.config.validation import Cosine, NonNegativeInt, PositiveInt, settings
from hyperrag.data.openie import read_openie
from hyperrag.data.types import Corpus, Dataset, Passage
from hyperrag.embedding.encoder import default_cache_dir
from hyperrag.errors import InputError
from hyperrag.graph.build import GraphEmbeddings, build_knowledge_graph
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.graph.provenance import GraphProvenance, build_provenance
from hyperrag.index.lock import clear_index_directory, index_entries, index_writer
from hyperrag.index.passages import graph_folder, write_passages
from hyperrag.index.store import IndexCorruptError, IndexDirectory
from hyperrag.ops.knn_graph import KnnSettings
from hyperrag.utils.atomic import atomic_torch_save
from hyperrag.utils.hashing import Hasher, file_digest, passage_digest, stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder

log = logging.getLogger(__name__)
EMBEDDINGS_FILE = "embeddings.pt"


@settings
class GraphSettings:
    """Knowledge-graph index settings (``hydra_configs/graph/``; part of the index key).

    Attributes:
        synonym_threshold: cosine at or above which two entities get a synonym edge.
        synonym_topk: nearest entities examined per entity for synonym edges.
        synonym_min_chars: entities with shorter names get no synonym edges.
        fact_template: how a fact ``(s, r, o)`` is written for its embedding.
        knn: how the synonym edges' top-k cosine neighbours are searched (exact or approximate by size).
        text_form: how OpenIE text becomes entity and relation names: ``canonical`` (Unicode kept, spaces
            collapsed) or ``hipporag`` (HippoRAG 2's code: ASCII letters and digits only, a passage's identical
            raw triples once).
    """

    synonym_threshold: Cosine
    synonym_topk: PositiveInt
    synonym_min_chars: NonNegativeInt
    fact_template: str
    knn: KnnSettings
    text_form: Literal["canonical", "hipporag"]


@dataclass
class KGIndex:
    graph: KnowledgeGraph
    embeddings: GraphEmbeddings
    directory: Path
    built: bool  # False when loaded from an existing directory
    seconds: float
    provenance: GraphProvenance | None = None
    key: str = ""  # the manifest key (changes with every insert/delete)
    encoder_key: str = ""  # the encoder the embeddings come from (``TextEncoder.model_key``)


def corpus_fingerprint(dataset: Dataset) -> str:
    """Digest of the corpus: its passages' digests (id, title, text) in order."""
    h = Hasher()
    for p in dataset.corpus.passages:
        h.update(passage_digest(p))
    return h.hexdigest()


def save_kg_files(folder: Path, graph: KnowledgeGraph, emb: GraphEmbeddings, prov: GraphProvenance,
                  prefix: str = "", passages: list[Passage] | None = None) -> dict[str, str]:
    """Write the index files (atomically) into ``folder``; return ``{name relative to the index: stage}``.

    ``passages`` (in graph order) are stored as ``passages.jsonl`` when given.
    """
    folder.mkdir(parents=True, exist_ok=True)
    files = {prefix + name: "graph" for name in graph.save(folder)}
    files[prefix + prov.save(folder)] = "graph"
    if passages is not None:
        if [p.id for p in passages] != graph.passage_ids:
            raise ValueError("passages are not in graph order")
        files[prefix + write_passages(folder, passages)] = "graph"
    atomic_torch_save(asdict(emb), folder / EMBEDDINGS_FILE)
    files[prefix + EMBEDDINGS_FILE] = "embeddings"
    return files


def read_kg_files(directory: IndexDirectory, manifest: dict[str, Any]) -> tuple[KnowledgeGraph, GraphEmbeddings,
                                                                               GraphProvenance | None]:
    """Load verified files; an unreadable one raises :class:`IndexCorruptError` naming it."""
    folder = graph_folder(directory, manifest)
    rel = folder.relative_to(directory.path)
    try:
        graph = KnowledgeGraph.load(folder)
    except Exception as err:  # noqa: BLE001 - any unreadable file is reported the same way
        raise directory.corrupt(str(rel / "graph.pt"), f"unreadable ({type(err).__name__})", "graph") from None
    try:
        emb = GraphEmbeddings(**torch.load(folder / EMBEDDINGS_FILE, weights_only=True))
    except Exception as err:  # noqa: BLE001
        raise directory.corrupt(str(rel / EMBEDDINGS_FILE), f"unreadable ({type(err).__name__})", "embeddings") from None
    prov = GraphProvenance.load(folder) if (folder / "provenance.pt").is_file() else None
    if emb.passage.shape[0] != graph.num_passages:
        raise directory.corrupt(str(rel / EMBEDDINGS_FILE), f"has {emb.passage.shape[0]} passage rows for "
                                f"{graph.num_passages} passages (mismatched files)", "embeddings")
    return graph, emb, prov


def load_kg_directory(path: str | Path) -> KGIndex:
    """Load and verify any knowledge-graph index directory (built or incrementally updated)."""
    t0 = time.perf_counter()
    directory = IndexDirectory(path, stage="graph")
    if not directory.path.is_dir():
        raise InputError("index directory not found", path=directory.path)

    def read() -> KGIndex:
        manifest = directory.verify()
        graph, emb, prov = read_kg_files(directory, manifest)
        return KGIndex(graph, emb, directory.path, False, time.perf_counter() - t0, prov,
                       str(manifest.get("key", "")), str(manifest.get("inputs", {}).get("encoder", "")))

    return directory.read_stable(read)  # no lock: a generation published meanwhile is read instead


def _index_key(corpus: Corpus, openie_path: Path, encoder: Encoder,
               settings: GraphSettings) -> tuple[str, dict[str, Any]]:
    inputs = {"corpus": corpus_fingerprint(Dataset("", corpus, [])), "openie": file_digest(openie_path),
              "encoder": encoder.model_key}
    keyed = asdict(settings)
    if keyed.get("text_form") == "canonical":  # the default: indexes built before the setting keep their key
        del keyed["text_form"]
    elif keyed.get("text_form") == "hipporag":  # issue 41: names processing to "" are kept (new graphs, new keys)
        keyed["hipporag_empty_names"] = True
    return stable_digest({"inputs": inputs, "settings": keyed}), inputs


def _build_into(directory: IndexDirectory, corpus: Corpus, openie_path: Path, encoder: Encoder,
                settings: GraphSettings, key: str, inputs: dict[str, Any], t0: float,
                extra: dict[str, Any] | None = None) -> KGIndex:
    clear_index_directory(directory.path)  # stale, partial or corrupt: rebuild from scratch (the lock stays)
    directory.path.mkdir(parents=True, exist_ok=True)
    settings_dict = asdict(settings)
    openie = read_openie(openie_path, corpus)
    graph, emb = build_knowledge_graph(corpus, openie, encoder, **{**settings_dict, "knn": settings.knn})
    prov = build_provenance(graph, openie)
    files = save_kg_files(directory.path, graph, emb, prov, passages=list(corpus.passages))
    spec = encoder.spec() if callable(getattr(encoder, "spec", None)) else None  # how to embed inserts alike
    directory.write_manifest(key, settings_dict, {**inputs, "openie_path": str(openie_path),
                                                  "encoder_model": encoder.model_name, "embedder": spec},
                             files, graph.stats, extra=extra)
    log.info("built index %s in %.1fs", directory.path, time.perf_counter() - t0)
    return KGIndex(graph, emb, directory.path, True, time.perf_counter() - t0, prov, key, encoder.model_key)


def build_kg_directory(path: str | Path, corpus: Corpus, openie_path: str | Path, encoder: Encoder,
                       settings: GraphSettings, extra: dict[str, Any] | None = None,
                       replace: bool = False, lock_timeout: float | None = None) -> KGIndex:
    """Build the index of ``corpus`` (+ its OpenIE file) into ``path``, holding its writer lock
    (:mod:`hyperrag.index.lock`; ``lock_timeout``: seconds to wait for another writer, ``None``: the YAML's).

    An index of the same inputs already there is loaded, not rebuilt; any other index there (one that
    was updated since, or built from other inputs) is refused rather than overwritten — or, with ``replace``,
    deleted first (a folder that is not an index directory is always refused). ``extra``: more manifest
    fields (e.g. the chunking the passages were made with), kept by later updates.
    """
    t0 = time.perf_counter()
    key, inputs = _index_key(corpus, Path(openie_path), encoder, settings)
    directory = IndexDirectory(path, stage="graph")
    with index_writer(path, lock_timeout):
        if directory.matches(key):
            graph, emb, prov = read_kg_files(directory, directory.manifest() or {})
            return KGIndex(graph, emb, directory.path, False, time.perf_counter() - t0, prov, key,
                           encoder.model_key)
        if replace and directory.manifest_path.is_file():
            log.info("replacing the index in %s", directory.path)
            clear_index_directory(directory.path)
        if index_entries(directory.path):
            raise InputError("exists and holds another index (updated, or built from other inputs); delete it or "
                             "choose another folder", path=directory.path, field="--index")
        return _build_into(directory, corpus, Path(openie_path), encoder, settings, key, inputs, t0, extra)


def load_or_build_kg_index(dataset: Dataset, encoder: Encoder, settings: GraphSettings,
                           root: str | Path | None = None, on_corrupt: str = "rebuild") -> KGIndex:
    """Load the index for (dataset, OpenIE file, encoder, settings) or build it once.

    Args:
        on_corrupt: ``rebuild`` (log the one-line reason, rebuild) or ``raise``.
    """
    t0 = time.perf_counter()
    if dataset.openie_path is None:
        raise InputError(f"dataset {dataset.name!r} has no triples to build its knowledge graph from (no OpenIE "
                         "file and no LLM extracted one): add extractor=spacy (LLM-free spaCy stand-in), give "
                         "data.openie=<file> (HippoRAG format), or configure an LLM", field="extractor")
    key, inputs = _index_key(dataset.corpus, Path(dataset.openie_path), encoder, settings)
    root = Path(root) if root else default_cache_dir() / "index"
    directory = IndexDirectory(root / f"{dataset.name}-kg-{key[:12]}", stage="graph")

    def load() -> KGIndex | None:
        try:
            if directory.matches(key):
                graph, emb, prov = read_kg_files(directory, directory.manifest() or {})
                log.info("loaded index %s", directory.path)
                return KGIndex(graph, emb, directory.path, False, time.perf_counter() - t0, prov, key,
                               encoder.model_key)
        except IndexCorruptError as err:
            if on_corrupt != "rebuild":
                raise
            log.warning("%s — rebuilding stages 'graph' and 'embeddings' (cheap: embeddings are cached)", err)
        return None

    found = load()
    if found is not None:
        return found
    with index_writer(directory.path):  # one build at a time; a run that waited loads what the other built
        found = load()
        if found is not None:
            return found
        return _build_into(directory, dataset.corpus, Path(dataset.openie_path), encoder, settings, key, inputs,
                           t0)


def graph_settings(**overrides: Any) -> GraphSettings:
    """The knowledge-graph index settings of ``hydra_configs/graph/default.yaml`` (with ``overrides``)."""
    from hyperrag.config.compose import configured

    return configured("graph", GraphSettings, **overrides)
