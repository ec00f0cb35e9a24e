"""RAPTOR's tree: leaves are the corpus passages; each layer above clusters the layer below
(:func:`~hyperrag.tree.clustering.raptor_clusters`) and summarises every cluster into one new node, until a
layer is too small to cluster (at most ``reduction_dim + 1`` nodes) or ``num_layers`` layers exist. One guard
RAPTOR lacks: a clustering that merges nothing (as many clusters as nodes) ends the tree instead of copying the
layer upwards.

A summary is written by the LLM (``raptor_summary`` task, one layer at a time, concurrent calls) or, without an
LLM or after a failed call, by the documented *extractive stand-in*: the first sentence of each child, children
taken by closeness to the cluster's centroid, until ``summary_tokens`` (a stand-in node repeats its children's
words; it has no model's abstraction). Every node is embedded with the run's encoder (cached per text).

The tree is cached in an index directory keyed by the leaves (ids and texts), the encoder, the settings and the
summariser (the LLM's model, or ``stand-in`` — also for ``llm=oracle``, which has no gold for summaries); a rerun
loads it, unless some LLM summaries had failed (then it is built again, the successful summaries coming back from
the LLM response cache and the failed ones asked again). A build killed midway recomputes the
clustering, while the summaries it had finished come back from the LLM response cache.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.config.validation import PositiveInt, settings
from hyperrag.embedding.encoder import default_cache_dir
from hyperrag.graph.utils import csr_from_lists
from hyperrag.hierarchy.tokens import make_token_counter
from hyperrag.index.store import IndexCorruptError, IndexDirectory
from hyperrag.llm.stages import stop_if_nothing_succeeded
from hyperrag.tree.clustering import ClusteringSettings, raptor_clusters
from hyperrag.utils.atomic import atomic_torch_save, atomic_write_text
from hyperrag.utils.hashing import stable_digest
from hyperrag.utils.sentences import split_sentences

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel

log = logging.getLogger(__name__)


@settings
class TreeSettings:
    """The tree (part of its cache key).

    Attributes:
        num_layers: at most this many summary layers above the leaves (RAPTOR: 5).
        clustering: :class:`~hyperrag.tree.clustering.ClusteringSettings`.
        summary_tokens: length of a summary: the LLM's word limit (× 0.75 words per token) and the stand-in's
            token budget (RAPTOR: 100).
        token_counter: ``approx`` (words × 1.3), ``words:<ratio>`` or a local tokenizer folder.
    """

    num_layers: PositiveInt
    clustering: ClusteringSettings
    summary_tokens: PositiveInt
    token_counter: str


@dataclass
class SummaryTree:
    """N nodes: the P leaves (passages, in corpus order) first, then the summary nodes layer by layer.

    Attributes:
        texts: N node texts.
        layer: LongTensor [N], 0 for leaves.
        child_ptr / child_idx: CSR, each node's children (empty for leaves).
        leaf_ptr / leaf_idx: CSR, the leaves under each node (a leaf: itself).
        embeddings: FloatTensor [N, D], unit rows.
        summarised: BoolTensor [N], nodes whose text is an LLM summary (False for leaves and stand-ins).
        stats: layer sizes, LLM summaries, stand-ins, seconds.
    """

    texts: list[str]
    layer: torch.Tensor
    child_ptr: torch.Tensor
    child_idx: torch.Tensor
    leaf_ptr: torch.Tensor
    leaf_idx: torch.Tensor
    embeddings: torch.Tensor
    summarised: torch.Tensor
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return len(self.texts)

    @property
    def num_leaves(self) -> int:
        return int((self.layer == 0).sum())

    @property
    def num_layers(self) -> int:
        return int(self.layer.max()) if self.num_nodes else 0

    def children(self, node: int) -> torch.Tensor:
        return self.child_idx[self.child_ptr[node]: self.child_ptr[node + 1]]

    def leaves(self, node: int) -> torch.Tensor:
        return self.leaf_idx[self.leaf_ptr[node]: self.leaf_ptr[node + 1]]

    TENSORS = ("layer", "child_ptr", "child_idx", "leaf_ptr", "leaf_idx", "embeddings", "summarised")

    def save(self, directory: Path) -> list[str]:
        atomic_torch_save({k: getattr(self, k) for k in self.TENSORS}, directory / "tree.pt")
        atomic_write_text(directory / "tree.json", json.dumps({"texts": self.texts, "stats": self.stats},
                                                              ensure_ascii=False))
        return ["tree.pt", "tree.json"]

    @classmethod
    def load(cls, directory: Path) -> SummaryTree:
        tensors = torch.load(directory / "tree.pt", weights_only=True)
        meta = json.loads((directory / "tree.json").read_text(encoding="utf-8"))
        return cls(texts=meta["texts"], stats=meta["stats"], **tensors)


def extractive_summary(child_texts: list[str], child_emb: torch.Tensor, budget: int, counter: Any) -> str:
    """The stand-in summary: each child's first sentence, children by cosine to their centroid, within
    ``budget`` tokens (the first sentence always)."""
    centroid = torch.nn.functional.normalize(child_emb.mean(0), dim=0)
    order = torch.argsort(child_emb @ centroid, descending=True, stable=True).tolist()
    out: list[str] = []
    used = 0
    for i in order:
        sentences = split_sentences(child_texts[i])
        if not sentences:
            continue
        cost = counter(sentences[0])
        if out and used + cost > budget:
            break
        out.append(sentences[0])
        used += cost
    return " ".join(out)


class TreeBuilder:
    """Builds a :class:`SummaryTree` over passages.

    Args:
        settings: :class:`TreeSettings`.
        encoder: embeds summary nodes.
        llm: the summariser (``None`` / unavailable: stand-ins only).
    """

    def __init__(self, settings: TreeSettings, encoder: Encoder, llm: LanguageModel | None = None) -> None:
        self.settings = settings
        self.encoder = encoder
        self.llm = llm if getattr(llm, "available", False) else None
        self.count = make_token_counter(settings.token_counter)
        #: LLM summaries asked for that came back empty or failed, those that worked, and why the first failed
        self.failed = self.succeeded = 0
        self.first_error: str | None = None

    def summarise(self, clusters: list[list[int]], texts: list[str], emb: torch.Tensor) -> tuple[list[str], list[bool]]:
        """One text per cluster of nodes: the LLM's summary, else the stand-in. Returns (texts, is LLM summary)."""
        budget = self.settings.summary_tokens
        out = [extractive_summary([texts[i] for i in c], emb[c], budget, self.count) for c in clusters]
        done = [False] * len(clusters)
        if self.llm is None:
            return out, done
        words = max(1, int(budget * 0.75))
        inputs = [{"texts": [texts[i] for i in c], "max_words": words} for c in clusters]
        results = self.llm.complete_structured_batch("raptor_summary", inputs, progress="raptor summaries")
        for j, res in enumerate(results):
            if res.ok and str(res.value).strip():
                out[j], done[j] = str(res.value).strip(), True
                self.succeeded += 1
            else:
                self.failed += 1
                self.first_error = self.first_error or (f"{res.error_kind}: {res.error}" if not res.ok
                                                        else "an empty summary")
        # every summary asked for failed (dead endpoint, a model that cannot do the task): stop before stand-ins
        # become the next layer's input; the ones that worked in an earlier layer come back from the LLM cache
        stop_if_nothing_succeeded("RAPTOR cluster summaries", failed=self.failed, succeeded=self.succeeded,
                                  first_error=self.first_error, llm=self.llm, unit="clusters")
        return out, done

    def build(self, leaf_texts: list[str], leaf_emb: torch.Tensor) -> SummaryTree:
        t0 = time.perf_counter()
        s = self.settings
        texts = list(leaf_texts)
        layers = [0] * len(texts)
        children: list[list[int]] = [[] for _ in texts]
        leaves: list[list[int]] = [[i] for i in range(len(texts))]
        summarised = [False] * len(texts)
        emb = leaf_emb.float().cpu()
        nodes = list(range(len(texts)))
        sizes = [len(nodes)]
        for layer in range(1, s.num_layers + 1):
            if len(nodes) <= s.clustering.reduction_dim + 1:
                break
            tokens = [self.count(texts[i]) for i in nodes]
            clusters = [[nodes[i] for i in c] for c in raptor_clusters(emb[nodes].numpy(), tokens, s.clustering)]
            if len(clusters) >= len(nodes):  # nothing merged: another layer would only copy this one
                break
            new_texts, llm_made = self.summarise(clusters, texts, emb)
            new_emb = self.encoder.encode(new_texts, desc=f"raptor layer {layer}").float().cpu()
            first = len(texts)
            for c, text, made in zip(clusters, new_texts, llm_made):
                texts.append(text)
                layers.append(layer)
                children.append(c)
                leaves.append(sorted({leaf for child in c for leaf in leaves[child]}))
                summarised.append(made)
            emb = torch.cat([emb, new_emb])
            nodes = list(range(first, len(texts)))
            sizes.append(len(nodes))
            log.info("raptor layer %d: %d clusters", layer, len(nodes))
        child_ptr, child_idx = csr_from_lists(children)
        leaf_ptr, leaf_idx = csr_from_lists(leaves)
        summaries = len(texts) - len(leaf_texts)
        made = sum(summarised)
        stats = {"layer_sizes": sizes, "nodes": len(texts), "summaries": summaries, "llm_summaries": made,
                 "stand_in": summaries - made, "seconds": round(time.perf_counter() - t0, 2)}
        return SummaryTree(texts, torch.tensor(layers, dtype=torch.long), child_ptr, child_idx, leaf_ptr, leaf_idx,
                           torch.nn.functional.normalize(emb, dim=1), torch.tensor(summarised, dtype=torch.bool),
                           stats)


def summarises(llm: LanguageModel | None) -> bool:
    """Whether ``llm`` can write cluster summaries: an available model — but not a gold-informed oracle, which has
    no gold for a summary and fails every ``raptor_summary`` call (the tree would be the stand-in tree, rebuilt)."""
    if not getattr(llm, "available", False):
        return False
    if getattr(llm, "requires_gold", False):
        from hyperrag.llm.oracle.answers import ORACLES

        return "raptor_summary" in ORACLES
    return True


def load_or_build_tree(passage_ids: list[str], leaf_texts: list[str], leaf_emb: torch.Tensor, encoder: Encoder,
                       llm: LanguageModel | None, settings: TreeSettings, root: str | Path | None = None,
                       name: str = "corpus") -> tuple[SummaryTree, Path, bool]:
    """The tree over these passages, loaded from its index directory or built once.

    Returns:
        ``(tree, directory, built)``.
    """
    if not summarises(llm):
        llm = None
    summariser = str(getattr(llm, "model", None) or getattr(llm, "kind", "llm")) if llm is not None else "stand-in"
    leaves = stable_digest([[pid, text] for pid, text in zip(passage_ids, leaf_texts)])
    inputs = {"leaves": leaves, "encoder": getattr(encoder, "model_key", ""), "summariser": summariser}
    key = stable_digest({"inputs": inputs, "settings": asdict(settings)})
    root = Path(root) if root else default_cache_dir() / "index"
    directory = IndexDirectory(root / f"{name}-raptor-{key[:12]}", stage="tree")
    try:
        if directory.matches(key):
            tree = SummaryTree.load(directory.path)
            if llm is None or not tree.stats.get("stand_in"):
                return tree, directory.path, False
            # some summaries failed when it was built: build again, the LLM cache answers the ones that worked
            log.warning("raptor tree %s has %d stand-in summaries from failed LLM calls — rebuilding",
                        directory.path, tree.stats["stand_in"])
    except IndexCorruptError as err:  # cheap enough to redo: clustering, plus summaries from the LLM cache
        log.warning("%s — rebuilding the tree", err)
    if directory.path.exists():
        shutil.rmtree(directory.path)
    directory.path.mkdir(parents=True)
    tree = TreeBuilder(settings, encoder, llm).build(leaf_texts, leaf_emb)
    files = tree.save(directory.path)
    directory.write_manifest(key, asdict(settings), inputs, {f: "tree" for f in files}, tree.stats)
    log.info("built raptor tree %s: %s", directory.path, tree.stats)
    return tree, directory.path, True
