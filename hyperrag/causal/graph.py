"""The causal graph of a corpus: directed cause → effect triples with provenance, as tensors, cached on disk.

Build (:func:`build_causal_graph`) — steps 1–3 per passage, giving its *records*
(:mod:`hyperrag.causal.records`), step 4 over all records (:func:`assemble_causal_graph`):
  1. candidate span pairs per sentence (:mod:`hyperrag.causal.candidates`): explicit connectives and causal
     OpenIE relations;
  2. scoring — with the UniCausal-trained pair classifier (:class:`~hyperrag.causal.classifier.CausalPairClassifier`,
     ``python train.py task=causal_pair data=unicausal``) each candidate is read marked in both orders,
     ``p_fwd = P(cause → effect)`` and ``p_rev``; it is reoriented when ``p_rev > p_fwd`` and accepted when
     ``max(p_fwd, p_rev) >= accept_threshold``. Without a classifier the rule priors decide (strong connective
     1.0, OpenIE causal relation ``openie_prior``, weak connective ``weak_prior``) — the labelled LLM-free
     fallback, not the paper's extractor;
  3. verification (Appendix A.2) — with an LLM, every accepted pair (at most ``verify_max_pairs`` when set) goes
     through ``causal_pair_verification`` with the contextual metadata (``verify_domain``, the dataset, the
     extracting model): an incorrect pair is dropped (``llm_drop_rejected``), a reversed one reoriented, the
     weight becomes the mean of the score and the stated confidence (High 1, Medium 2/3, Low 1/3) and the
     rephrased causal statement is kept with the edge. A failed call leaves the pair unverified and is counted
     (``llm_failed``);
  4. assembly, deterministic in the corpus order: nodes are the canonical span texts (one node per distinct
     cause/effect, in order of first appearance), embedded with the encoder for semantic lookup; ``alias``
     links join nodes whose embeddings are at least ``alias_threshold`` similar, so that a path can continue
     from an effect to a differently worded cause of another triple.

Stored (:class:`CausalGraph`): ``node_names`` [N], ``node_emb`` [N, D], ``edge_index`` [2, M] (cause → effect),
``edge_weight`` [M], ``edge_passage`` [M] (corpus position), per-edge provenance (sentence, connective,
source, classifier and LLM scores), ``alias_index`` [2, A] / ``alias_weight`` [A]; next to it the per-passage
records (``causal_records.jsonl``), all listed with checksums in the manifest. The index directory is keyed
by corpus, OpenIE (file, or the knowledge-graph index the triples come from), encoder, settings, classifier
checkpoint and verifying LLM.

Incremental updates (:func:`load_or_build_causal_index`): when no index exists for the current key, the newest
index of the same dataset name and *family* (the key without corpus and OpenIE: same settings, encoder,
classifier and verifier) lends the records of every unchanged passage (same id, title, text and OpenIE
triples); only new and changed passages are extracted, scored and verified, deleted ones drop out, and the
graph is assembled again — identical to a full rebuild of the final corpus (without an LLM; with one,
``verify_max_pairs`` caps the *new* pairs of an update, see :mod:`hyperrag.causal.records`). ``stats`` say
how many passages were reused and computed, and from which index.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.causal.candidates import normalize_span
from hyperrag.causal.records import (
    RECORDS_FILE,
    RECORDS_FORMAT,
    PassageRecord,
    compute_records,
    load_records,
    save_records,
    score_candidates,
    split_reusable,
)
from hyperrag.causal.settings import CausalGraphSettings
from hyperrag.data.types import Corpus, Dataset
from hyperrag.embedding.encoder import default_cache_dir
from hyperrag.graph.utils import both_directions
from hyperrag.index.store import IndexCorruptError, IndexDirectory
from hyperrag.ops.knn_graph import cosine_knn_graph
from hyperrag.utils.atomic import atomic_torch_save, atomic_write_text
from hyperrag.utils.hashing import file_digest, stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel

log = logging.getLogger(__name__)


@dataclass
class CausalGraph:
    """Directed causal triples as tensors (see the module docstring)."""

    node_names: list[str]
    node_emb: torch.Tensor  # [N, D]
    edge_index: torch.Tensor  # [2, M] cause -> effect
    edge_weight: torch.Tensor  # [M]
    edge_passage: torch.Tensor  # [M] corpus positions
    edge_info: list[dict[str, Any]]  # [M] provenance: sentence, connective, source, scores, passage_id
    alias_index: torch.Tensor  # [2, A] both directions
    alias_weight: torch.Tensor  # [A]
    passage_ids: list[str]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return len(self.node_names)

    @property
    def num_edges(self) -> int:
        return int(self.edge_index.shape[1])

    def triple(self, e: int) -> tuple[str, str]:
        """``(cause, effect)`` names of edge ``e``."""
        u, v = self.edge_index[:, e].tolist()
        return self.node_names[u], self.node_names[v]

    def edge_text(self, e: int) -> str:
        cause, effect = self.triple(e)
        return f"{cause} → causes → {effect}"

    TENSORS = ("node_emb", "edge_index", "edge_weight", "edge_passage", "alias_index", "alias_weight")

    def save(self, directory: str | Path) -> list[str]:
        directory = Path(directory)
        atomic_torch_save({k: getattr(self, k) for k in self.TENSORS}, directory / "causal_graph.pt")
        meta = {
            "node_names": self.node_names,
            "edge_info": self.edge_info,
            "passage_ids": self.passage_ids,
            "stats": self.stats,
        }
        atomic_write_text(directory / "causal_graph.json", json.dumps(meta, ensure_ascii=False))
        return ["causal_graph.pt", "causal_graph.json"]

    @classmethod
    def load(cls, directory: str | Path) -> CausalGraph:
        directory = Path(directory)
        tensors = torch.load(directory / "causal_graph.pt", weights_only=True)
        meta = json.loads((directory / "causal_graph.json").read_text())
        return cls(**meta, **tensors)


_score_candidates = score_candidates  # the scorer lives with the per-passage records


def assemble_causal_graph(
    corpus: Corpus,
    records: Sequence[PassageRecord],
    encoder: Encoder,
    settings: CausalGraphSettings,
    classifier: bool = False,
) -> CausalGraph:
    """The causal graph of ``corpus`` from its passages' records (``records[j]`` belongs to ``corpus[j]``).

    Deterministic given the records and the corpus order: nodes are the normalised spans in order of first
    appearance (the first raw text names the node), edges follow passage position then record order,
    ``edge_passage`` holds corpus positions; node embeddings come from the encoder (its on-disk cache makes
    known names free) and alias links are recomputed over all nodes.
    """
    s = settings
    if len(records) != len(corpus) or any(r.id != p.id for r, p in zip(records, corpus.passages)):
        raise ValueError("records are not the corpus's passages in corpus order")
    key_to_node: dict[str, int] = {}
    names: list[str] = []

    def node(text: str) -> int:
        k = normalize_span(text)
        if k not in key_to_node:
            key_to_node[k] = len(names)
            names.append(text)
        return key_to_node[k]

    src, dst, weight, passage, info = [], [], [], [], []
    candidates: dict[str, int] = {}
    llm = {"verified": 0, "dropped": 0, "reoriented": 0, "failed": 0}
    accepted = 0
    for pos, (p, rec) in enumerate(zip(corpus.passages, records)):
        for k, v in rec.counts.items():
            candidates[k] = candidates.get(k, 0) + v
        for k in llm:
            llm[k] += int(rec.llm.get(k, 0))
        accepted += len(rec.pairs)
        for pair in rec.pairs:
            u, v = node(pair["cause"]), node(pair["effect"])
            if u == v:
                continue
            src.append(u)
            dst.append(v)
            weight.append(float(pair["weight"]))
            passage.append(pos)
            info.append(
                {
                    "passage_id": p.id,
                    "sentence": pair["sentence"],
                    "connective": pair["connective"],
                    "source": pair["source"],
                    "strength": pair["strength"],
                    "statement": pair.get("statement", ""),
                    **pair["scores"],
                }
            )
    emb = encoder.encode(names, desc="causal nodes") if names else torch.empty(0, 0)
    alias_index, alias_weight = torch.empty(2, 0, dtype=torch.long), torch.empty(0)
    if len(names) > 1:
        a, b, sim = cosine_knn_graph(emb, s.alias_topk, s.alias_threshold, s.knn)
        # both directions, one arc per pair, the larger similarity where a pair was found twice
        alias_index, alias_weight = both_directions(torch.stack([a, b]), sim.float(), len(names), "max")
    graph = CausalGraph(
        node_names=names,
        node_emb=emb.float(),
        edge_index=torch.tensor([src, dst], dtype=torch.long).reshape(2, -1),
        edge_weight=torch.tensor(weight, dtype=torch.float32),
        edge_passage=torch.tensor(passage, dtype=torch.long),
        edge_info=info,
        alias_index=alias_index,
        alias_weight=alias_weight.float(),
        passage_ids=corpus.ids,
    )
    graph.stats = {
        "candidates": candidates,
        "accepted": accepted,
        "nodes": graph.num_nodes,
        "edges": graph.num_edges,
        "alias_links": int(alias_index.shape[1]) // 2,
        "passages_with_edges": int(graph.edge_passage.unique().numel()),
        "classifier": classifier,
        "llm_verified": llm["verified"],
        "llm_dropped": llm["dropped"],
        "llm_reoriented": llm["reoriented"],
        "llm_failed": llm["failed"],
    }
    return graph


def update_causal_graph(
    dataset: Dataset,
    encoder: Encoder,
    settings: CausalGraphSettings,
    classifier: Any = None,
    llm: LanguageModel | None = None,
    openie_triples: Sequence[Sequence[tuple[str, str, str]]] | None = None,
    base: Mapping[str, PassageRecord] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> tuple[CausalGraph, list[PassageRecord]]:
    """The causal graph of ``dataset`` reusing the records in ``base`` (``{fingerprint: record}``) of every
    unchanged passage; only new and changed passages are extracted, scored and sent to the LLM (with
    ``metadata`` as the verification prompt's contextual metadata; default: ``verify_domain``, the dataset's name
    and the extracting model).

    Returns:
        ``(graph, records)`` — the records in corpus order (what the causal index stores).
    """
    t0 = time.perf_counter()
    s = settings
    passages = dataset.corpus.passages
    reused, todo = split_reusable(passages, openie_triples, s, base)
    if metadata is None:  # the verification prompt's contextual metadata (Appendix A.2)
        metadata = {"domain": s.verify_domain, "dataset": dataset.name,
                    "source_model": "UniCausal pair classifier" if classifier is not None else "connective and OpenIE rules"}
    info = {"candidates": 0, "scored": 0, "llm_asked": 0, "llm_failed": 0}
    computed: list[PassageRecord] = []
    if todo:
        triples = (
            None
            if openie_triples is None
            else [openie_triples[j] if j < len(openie_triples) else [] for j in todo]
        )
        computed, info = compute_records(
            [passages[j] for j in todo], triples, s, classifier=classifier, llm=llm, metadata=metadata
        )
    by_pos = dict(reused)
    by_pos.update(zip(todo, computed))
    records = [by_pos[j] for j in range(len(passages))]
    graph = assemble_causal_graph(dataset.corpus, records, encoder, s, classifier=classifier is not None)
    graph.stats.update(
        {
            "passages_reused": len(reused),
            "passages_computed": len(todo),
            "pairs_scored": info["scored"],
            "llm_asked": info["llm_asked"],
            "llm_failed_this_build": info["llm_failed"],
            "seconds": round(time.perf_counter() - t0, 3),
        }
    )
    log.info("causal graph: %s", graph.stats)
    return graph, records


def build_causal_graph(
    dataset: Dataset,
    encoder: Encoder,
    settings: CausalGraphSettings,
    classifier: Any = None,
    llm: LanguageModel | None = None,
    openie_triples: list[list[tuple[str, str, str]]] | None = None,
) -> CausalGraph:
    """Candidates → scores → LLM verification → nodes, edges, embeddings (see the module docstring)."""
    return update_causal_graph(dataset, encoder, settings, classifier, llm, openie_triples)[0]


@dataclass
class CausalIndex:
    """A loaded or built causal index; ``base`` is the index whose records were reused (None: loaded, or built
    from scratch)."""

    graph: CausalGraph
    directory: Path
    built: bool
    seconds: float
    base: Path | None = None


def _checkpoint_id(path: str | Path | None) -> dict[str, Any] | None:
    if not path:
        return None
    p = Path(path)
    st = p.stat()
    return {"path": str(p.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def load_pair_classifier(path: str | Path) -> Any:
    """The :class:`~hyperrag.causal.classifier.CausalPairClassifier` of a checkpoint, on the CPU."""
    from hyperrag.causal.classifier import CausalPairClassifier

    return CausalPairClassifier.load_from_checkpoint(str(path), map_location="cpu")


class _LazyClassifier:
    """The pair classifier of a checkpoint, loaded on first use (an update that reuses every record loads none)."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._model: Any = None

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = load_pair_classifier(self.path)
        return self._model

    @property
    def hparams(self) -> Any:
        return self.model.hparams

    def predict_proba(self, texts: Sequence[str], batch_size: int = 64) -> torch.Tensor:
        return self.model.predict_proba(texts, batch_size=batch_size)


def _family_members(root: Path, name: str, family: str) -> list[tuple[int, IndexDirectory, dict[str, Any]]]:
    """Complete causal indexes of dataset ``name`` and this family under ``root``, newest first."""
    out = []
    for path in root.glob(f"{name}-causal-*"):
        directory = IndexDirectory(path)
        manifest = directory.manifest()
        if manifest and manifest.get("family") == family and RECORDS_FILE in manifest["files"]:
            out.append((int(manifest.get("created_ns", 0)), directory, manifest))
    return sorted(out, key=lambda m: -m[0])


def _base_records(
    root: Path, name: str, family: str, exclude: Path
) -> tuple[Path | None, dict[str, PassageRecord] | None]:
    """The records of the newest intact index of the family (a damaged one is skipped with a warning)."""
    for _, directory, manifest in _family_members(root, name, family):
        if directory.path == exclude:
            continue
        try:
            directory.verify(manifest)
            return directory.path, load_records(directory.path)
        except (IndexCorruptError, ValueError) as err:
            log.warning("causal index %s not reused: %s", directory.path, err)
    return None, None


def load_or_build_causal_index(
    dataset: Dataset,
    encoder: Encoder,
    settings: CausalGraphSettings,
    classifier_path: str | Path | None = None,
    llm: LanguageModel | None = None,
    root: str | Path | None = None,
    *,
    openie_triples: Sequence[Sequence[tuple[str, str, str]]] | None = None,
    openie_key: str | None = None,
    incremental: bool = True,
    keep: int = 3,
) -> CausalIndex:
    """Load the causal index for (dataset, OpenIE, encoder, settings, classifier, LLM) or build it —
    incrementally from the newest causal index of the same dataset name and family when there is one.

    Args:
        openie_triples: the passages' triples (``openie_triples[j]`` for ``corpus[j]``) instead of the dataset's
            OpenIE file, e.g. those of a knowledge-graph index (:func:`~hyperrag.graph.provenance.passage_triples`);
            ``openie_key`` identifies them in the index key (default: their hash).
        incremental: reuse the records of unchanged passages from the newest index of the same family.
        keep: indexes of the family kept under ``root`` after a build (older ones are removed; 0 keeps all).
    """
    from hyperrag.index.kg_index import corpus_fingerprint

    t0 = time.perf_counter()
    s = settings
    verifier = None
    if s.verify and getattr(llm, "available", False):
        verifier = {"kind": getattr(llm, "kind", "?"), "model": getattr(llm, "model", None)}
    family_inputs = {
        "encoder": encoder.model_key,
        "classifier": _checkpoint_id(classifier_path),
        "verifier": verifier,
    }
    openie: Any = None
    if s.use_openie and openie_triples is not None:
        openie = {"triples": openie_key or stable_digest([[list(t) for t in ts] for ts in openie_triples])}
    elif s.use_openie and dataset.openie_path:
        openie = file_digest(dataset.openie_path)
    inputs = {"corpus": corpus_fingerprint(dataset), "openie": openie, **family_inputs}
    settings_dict = asdict(s)
    key = stable_digest({"inputs": inputs, "settings": settings_dict, "kind": "causal"})
    family = stable_digest(
        {"inputs": family_inputs, "settings": settings_dict, "kind": "causal", "records": RECORDS_FORMAT}
    )
    root = Path(root) if root else default_cache_dir() / "index"
    directory = IndexDirectory(root / f"{dataset.name}-causal-{key[:12]}")
    try:
        if directory.matches(key):
            graph = CausalGraph.load(directory.path)
            log.info("loaded causal index %s", directory.path)
            return CausalIndex(graph, directory.path, False, time.perf_counter() - t0)
    except IndexCorruptError as err:
        log.warning("%s — rebuilding the causal index", err)
    triples = openie_triples
    if triples is None and dataset.openie_path is not None and s.use_openie:
        from hyperrag.data.openie import read_openie

        triples = read_openie(dataset.openie_path, dataset.corpus).triples
    base_dir, base = (
        _base_records(root, dataset.name, family, directory.path) if incremental else (None, None)
    )
    classifier = _LazyClassifier(classifier_path) if classifier_path else None
    graph, records = update_causal_graph(
        dataset,
        encoder,
        s,
        classifier=classifier,
        llm=llm,
        openie_triples=triples if s.use_openie else None,
        base=base,
    )
    graph.stats["base_index"] = base_dir.name if base_dir else None
    if directory.path.exists():
        shutil.rmtree(directory.path)
    directory.path.mkdir(parents=True)
    files = [*graph.save(directory.path), save_records(directory.path, records)]
    directory.write_manifest(
        key, settings_dict, inputs, files, graph.stats, extra={"family": family, "created_ns": time.time_ns()}
    )
    if base_dir is not None:
        log.info(
            "causal index %s: %d passages reused from %s, %d computed",
            directory.path.name,
            graph.stats["passages_reused"],
            base_dir.name,
            graph.stats["passages_computed"],
        )
    if keep > 0:
        for _, stale, _ in _family_members(root, dataset.name, family)[keep:]:
            if stale.path != directory.path:
                shutil.rmtree(stale.path, ignore_errors=True)
    return CausalIndex(graph, directory.path, True, time.perf_counter() - t0, base_dir)


__all__ = [
    "CausalGraph",
    "CausalGraphSettings",
    "CausalIndex",
    "assemble_causal_graph",
    "build_causal_graph",
    "load_or_build_causal_index",
    "update_causal_graph",
]
