"""Two-stage entity deduplication of a KG index, cached in its own index directory with an audit file.

``<root>/<name>-dedup-<key>/`` holds the merged graph (``graph.pt``/``graph.json``), its embeddings
(``embeddings.pt``: merged entities get the normalised mean of their members), ``entities.json`` (pooled
types and descriptions) and ``merges.jsonl`` — one line per merge::

    {"stage": "fuzzy", "kept": "barack obama", "merged": "barak obama", "score": 95.2, "kept_id": 12, "merged_id": 880}

``stage`` is ``fuzzy`` (rapidfuzz score 0–100) or ``embedding`` (cosine); ids are entity ids of the
undeduplicated graph. The key covers the KG index, the entity info and the settings, so a rerun loads it.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import torch
from pydantic import Field

from hyperrag.config.validation import Cosine, NonNegativeInt, PositiveInt, settings
from hyperrag.dedup.entities import EntityInfo
from hyperrag.dedup.fuzzy import fuzzy_pairs
from hyperrag.dedup.merge import MergeResult, merge_entities
from hyperrag.dedup.semantic import semantic_pairs
from hyperrag.embedding.encoder import default_cache_dir
from hyperrag.graph.build import GraphEmbeddings
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.index.store import IndexDirectory
from hyperrag.ops.knn_graph import KnnSettings
from hyperrag.utils.hashing import Hasher, stable_digest, text_digest
from hyperrag.utils.union_find import UnionFind

log = logging.getLogger(__name__)
AUDIT_FILE = "merges.jsonl"


@settings
class DedupSettings:
    """Attributes:
        enabled: False → the graph is used as extracted; ``auto`` is the caller's to resolve (HugRAG: on for
            LLM-extracted, described entity graphs only) before the graph is deduplicated.
        fuzzy_threshold: rapidfuzz score (0–100) at or above which two names merge (stage 1); ``null`` skips
            the stage.
        fuzzy_scorer: ``ratio`` | ``token_sort_ratio`` | ``token_set_ratio`` | ``WRatio``.
        embedding_threshold: cosine at or above which two groups merge (stage 2); ``null`` skips the stage.
        embedding_k: neighbours examined per group in stage 2.
        min_chars: names shorter than this never merge.
        use_types: entities with known, different types never merge.
        token_guard: multi-word names merge only with the same content words (plurals folded, stop words and
            word order ignored) — names one word apart are usually distinct entities.
        knn: how stage 2's neighbours are searched (``${graph.knn}``: exact or approximate by size).
    """

    enabled: Literal[True, False, "auto"]
    fuzzy_threshold: Annotated[float, Field(ge=0, le=100)] | None
    fuzzy_scorer: Literal["ratio", "token_sort_ratio", "token_set_ratio", "WRatio"]
    embedding_threshold: Cosine | None
    embedding_k: PositiveInt
    min_chars: NonNegativeInt
    use_types: bool
    token_guard: bool
    knn: KnnSettings


@dataclass
class DedupIndex:
    graph: KnowledgeGraph
    embeddings: GraphEmbeddings
    info: EntityInfo
    stats: dict[str, Any]
    directory: Path | None
    built: bool

    @property
    def audit_path(self) -> Path | None:
        return self.directory / AUDIT_FILE if self.directory else None


def _normalize(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)


def dedup_graph(graph: KnowledgeGraph, entity_emb: torch.Tensor, info: EntityInfo,
                settings: DedupSettings) -> tuple[MergeResult, torch.Tensor]:
    """Run both stages. Returns the merge result and the merged entities' embeddings [E_new, D]."""
    s = settings
    names = graph.entity_names
    types = info.types if s.use_types else None
    uf = UnionFind(graph.num_entities)
    records: list[dict[str, Any]] = []
    counts = graph.entity_passage_count

    def record(stage: str, a: int, b: int, score: float) -> None:
        kept, merged = (a, b) if (-int(counts[a]), a) <= (-int(counts[b]), b) else (b, a)
        records.append({"stage": stage, "kept": names[kept], "merged": names[merged], "score": round(score, 4),
                        "kept_id": kept, "merged_id": merged})

    t0 = time.perf_counter()
    stage1 = [] if s.fuzzy_threshold is None else fuzzy_pairs(names, s.fuzzy_threshold, s.fuzzy_scorer, s.min_chars,
                                                               types, token_guard=s.token_guard)
    for a, b, score in stage1:
        if uf.union(a, b):
            record("fuzzy", a, b, score)
    n_fuzzy = len(records)
    t1 = time.perf_counter()
    if s.embedding_threshold is not None and graph.num_entities > 1:
        labels = uf.labels()
        num_g = int(labels.max()) + 1
        reps = torch.full((num_g,), -1, dtype=torch.long)
        for e in range(graph.num_entities):  # first member of each group guards it
            if reps[labels[e]] < 0:
                reps[labels[e]] = e
        group_emb = torch.zeros(num_g, entity_emb.shape[1]).index_add_(0, labels, entity_emb.float())
        for a, b, score in semantic_pairs(_normalize(group_emb), names, s.embedding_threshold, s.embedding_k,
                                          s.min_chars, types, reps.tolist(), s.token_guard, s.knn):
            ea, eb = int(reps[a]), int(reps[b])
            if uf.union(ea, eb):
                record("embedding", ea, eb, score)
    t2 = time.perf_counter()
    group = uf.labels()
    result = merge_entities(graph, info, group, records)
    num_g = result.graph.num_entities
    merged_emb = _normalize(torch.zeros(num_g, entity_emb.shape[1]).index_add_(0, group, entity_emb.float()))
    result.stats.update({"fuzzy_merges": n_fuzzy, "embedding_merges": len(records) - n_fuzzy,
                         "seconds": {"fuzzy": round(t1 - t0, 3), "embedding": round(t2 - t1, 3),
                                     "rewrite": round(time.perf_counter() - t2, 3)}})
    log.info("dedup: %s", result.stats)
    return result, merged_emb


def _info_digest(info: EntityInfo) -> str:
    return text_digest(json.dumps([info.types, info.descriptions]))


def load_or_build_dedup(graph: KnowledgeGraph, embeddings: GraphEmbeddings, info: EntityInfo,
                        settings: DedupSettings, root: str | Path | None = None,
                        name: str = "graph", graph_key: str | None = None) -> DedupIndex:
    """The deduplicated graph for (KG index, entity info, settings), built once and then loaded.

    Args:
        graph / embeddings: the KG index to deduplicate.
        info: its entities' types and descriptions (:func:`hyperrag.dedup.entities.read_entity_info`).
        settings: :class:`DedupSettings`; ``enabled=False`` returns the inputs unchanged (no directory).
        root: folder of index directories (default ``$HYPERRAG_CACHE/index``).
        name: prefix of the directory name (the dataset's name).
        graph_key: the KG index key (any string that changes with the graph); default a digest of its tensors.
    """
    s = settings
    if s.enabled == "auto":
        raise ValueError("dedup settings with enabled='auto': resolve it to true or false first")
    if not s.enabled:
        return DedupIndex(graph, embeddings, info, {"enabled": False}, None, False)
    if graph_key is None:
        h = Hasher()
        for t in (graph.edge_index, graph.edge_weight, graph.entity_passage_idx):
            h.update(t.contiguous().numpy().tobytes())
        graph_key = h.update("\x1f".join(graph.entity_names)).hexdigest()
    inputs = {"graph": graph_key, "entity_info": _info_digest(info)}
    key = stable_digest({"inputs": inputs, "settings": asdict(s)})
    root = Path(root) if root else default_cache_dir() / "index"
    directory = IndexDirectory(root / f"{name}-dedup-{key[:12]}")
    if directory.matches(key):
        merged = KnowledgeGraph.load(directory.path)
        emb = torch.load(directory.path / "embeddings.pt", weights_only=True)
        merged_info = EntityInfo.from_json(json.loads((directory.path / "entities.json").read_text()))
        stats = directory.manifest()["stats"]  # type: ignore[index]
        return DedupIndex(merged, GraphEmbeddings(**emb), merged_info, stats, directory.path, False)
    if directory.path.exists():
        shutil.rmtree(directory.path)
    directory.path.mkdir(parents=True)
    result, entity_emb = dedup_graph(graph, embeddings.entity, info, s)
    merged_emb = GraphEmbeddings(entity_emb, embeddings.fact, embeddings.passage)
    files = result.graph.save(directory.path)
    torch.save(asdict(merged_emb), directory.path / "embeddings.pt")
    (directory.path / "entities.json").write_text(json.dumps(result.info.to_json(), ensure_ascii=False))
    with open(directory.path / AUDIT_FILE, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(rec, ensure_ascii=False) + "\n" for rec in result.records)
    files += ["embeddings.pt", "entities.json", AUDIT_FILE]
    stats = {"enabled": True, **result.stats}
    directory.write_manifest(key, asdict(s), inputs, files, stats)
    return DedupIndex(result.graph, merged_emb, result.info, stats, directory.path, True)
