"""The knowledge-graph index of a dataset: graph tensors + entity/fact/passage embeddings, cached by key."""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from hyperrag.data.openie import read_openie
from hyperrag.data.types import Dataset
from hyperrag.embedding.encoder import TextEncoder, default_cache_dir
from hyperrag.errors import InputError
from hyperrag.graph.build import GraphEmbeddings, build_knowledge_graph
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.index.store import IndexDirectory, fingerprint, sha256_file

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraphSettings:
    synonym_threshold: float = 0.8
    synonym_topk: int = 100
    synonym_min_chars: int = 3
    fact_template: str = "{s} {r} {o}"


@dataclass
class KGIndex:
    graph: KnowledgeGraph
    embeddings: GraphEmbeddings
    directory: Path
    built: bool  # False when loaded from an existing directory
    seconds: float


def corpus_fingerprint(dataset: Dataset) -> str:
    digest = hashlib.sha256()
    for p in dataset.corpus.passages:
        digest.update(f"{p.id}\x1f{p.title}\x1f{p.text}\x1e".encode())
    return digest.hexdigest()


def load_or_build_kg_index(dataset: Dataset, encoder: TextEncoder, settings: GraphSettings | None = None,
                           root: str | Path | None = None) -> KGIndex:
    """Load the index for (dataset, OpenIE file, encoder, settings) or build it once."""
    t0 = time.perf_counter()
    settings = settings or GraphSettings()
    if dataset.openie_path is None:
        raise InputError(f"dataset {dataset.name!r} has no OpenIE file; give data.openie=<file> "
                         "(HippoRAG format) to build its knowledge graph", field="data.openie")
    inputs = {"corpus": corpus_fingerprint(dataset), "openie": sha256_file(dataset.openie_path),
              "encoder": encoder.model_key}
    settings_dict = asdict(settings)
    key = fingerprint({"inputs": inputs, "settings": settings_dict})
    root = Path(root) if root else default_cache_dir() / "index"
    directory = IndexDirectory(root / f"{dataset.name}-kg-{key[:12]}")
    if directory.matches(key):
        graph = KnowledgeGraph.load(directory.path)
        emb = torch.load(directory.path / "embeddings.pt", weights_only=True)
        log.info("loaded index %s", directory.path)
        return KGIndex(graph, GraphEmbeddings(**emb), directory.path, False, time.perf_counter() - t0)

    if directory.path.exists():  # stale or partial: rebuild from scratch
        shutil.rmtree(directory.path)
    directory.path.mkdir(parents=True)
    openie = read_openie(dataset.openie_path, dataset.corpus)
    graph, emb = build_knowledge_graph(dataset.corpus, openie, encoder, **settings_dict)
    files = graph.save(directory.path)
    torch.save(asdict(emb), directory.path / "embeddings.pt")
    files.append("embeddings.pt")
    directory.write_manifest(key, settings_dict, {**inputs, "openie_path": str(dataset.openie_path)}, files,
                             graph.stats)
    log.info("built index %s in %.1fs", directory.path, time.perf_counter() - t0)
    return KGIndex(graph, emb, directory.path, True, time.perf_counter() - t0)
