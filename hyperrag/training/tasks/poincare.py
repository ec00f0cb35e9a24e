"""The Poincaré-ball tasks of ``train.py``: what to embed, how to build the model and data, how to judge the result.

``model`` and ``datamodule`` arrive as partials (``_partial_: true``) and are completed here with the task's
graph: ``num_nodes``, the edge list and, for passages, the sentence embeddings that initialise the ball.

* :class:`HyperRAGGraphTask` (``task=poincare``) — exactly the ball ``retrieve.py method=hyperrag`` uses:
  the ball index of :meth:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever.build` (explicit keyword forest,
  query-guided implicit forest or their fusion, ``method.graph``) from the ``method.retriever`` settings,
  saved to ``<models_dir>/hyperrag/<data>-<graph>-<key>/`` — the folder ``retrieve.py method=hyperrag``
  loads instead of training. LLM-free (the implicit graph's counted stand-in).
* :class:`PassageGraphTask` (``task=poincare_openie``) — the passages of ``data``, linked when their OpenIE
  records share a canonical entity (:func:`~hyperrag.hyperbolic.graphs.shared_entity_edges`), initialised
  from the ``embedder``'s sentence embeddings.
* :class:`TreeClosureTask` (``task=poincare_tree``) — the transitive closure of a complete tree, random
  initialisation (Nickel & Kiela's reconstruction setting; the benchmark's workload).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from typing_extensions import TypedDict

from hyperrag.config.validation import PositiveInt
from hyperrag.hyperbolic.datamodule import EdgeDataModule
from hyperrag.hyperbolic.distance import distance_to_origin, poincare_distance
from hyperrag.hyperbolic.evaluation import reconstruction_metrics
from hyperrag.hyperbolic.graphs import shared_entity_edges, tree_closure, tree_depths, tree_edges, tree_size
from hyperrag.hyperbolic.plot import plot_poincare_disk
from hyperrag.hyperbolic.poincare_model import PoincareEmbedding
from hyperrag.utils.artifacts import ArtifactRecord
from hyperrag.utils.hashing import stable_digest, text_digest

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder
    from hyperrag.retrievers.settings import HyperRAGSettings

log = logging.getLogger(__name__)


class SharedEntitySettings(TypedDict, total=False):
    """``task.graph`` of ``task=poincare_openie``: :func:`~hyperrag.hyperbolic.graphs.shared_entity_edges`."""

    max_entity_passages: PositiveInt
    max_neighbors: PositiveInt


@dataclass
class TaskGraph:
    """What a task embeds."""

    edges: torch.Tensor  # [2, E] training relations
    num_nodes: int
    init_embeddings: torch.Tensor | None = None  # [N, D] Euclidean, or None for a random start
    plot_edges: torch.Tensor | None = None  # edges drawn in the disk (default: ``edges``)
    colors: torch.Tensor | None = None  # per-node colour values for the plot
    labels: list[str] | None = None
    digest: str = ""  # hash of everything above that defines the data




def _settings(factory: Callable[..., Any]) -> dict[str, Any]:
    """The configured keyword arguments of a partial (its part of the model key)."""
    return {k: v for k, v in sorted(getattr(factory, "keywords", {}).items())}


class PoincareTask:
    """Base class: subclasses provide ``name``, ``data_name`` and :meth:`build_graph`.

    Args:
        model: partial of :class:`~hyperrag.hyperbolic.PoincareEmbedding` (all but the graph's arguments).
        datamodule: partial of :class:`~hyperrag.hyperbolic.EdgeDataModule`.
        name: the task's name (``models/<name>/...``).
        eval_symmetric: count both directions of every relation in the reconstruction metrics.
        pairwise_sample: node pairs sampled for ``mean_pairwise_distance`` (the collapse indicator).
    """

    data_name: str = "data"
    plot_filename: str = "poincare_disk.png"  # train.py writes the plot as <out>/<plot_filename>

    def __init__(self, model: Callable[..., PoincareEmbedding], datamodule: Callable[..., EdgeDataModule],
                 name: str, eval_symmetric: bool = False, pairwise_sample: int = 20000) -> None:
        self.model_factory = model
        self.datamodule_factory = datamodule
        self.name = name
        self.eval_symmetric = eval_symmetric
        self.pairwise_sample = pairwise_sample

    def build_graph(self) -> TaskGraph:
        raise NotImplementedError

    @cached_property
    def graph(self) -> TaskGraph:
        t0 = time.perf_counter()
        graph = self.build_graph()
        log.info("%s: %d nodes, %d relations (%.1fs)", self.name, graph.num_nodes, graph.edges.shape[1],
                 time.perf_counter() - t0)
        return graph

    def key(self, **extra: Any) -> str:
        """10 hex digits identifying the trained model: data digest, model and data settings, ``extra``."""
        return stable_digest(self.name, self.graph.digest, _settings(self.model_factory),
                             _settings(self.datamodule_factory), extra, length=10)

    def build_model(self) -> PoincareEmbedding:
        g = self.graph
        return self.model_factory(num_nodes=g.num_nodes, init_embeddings=g.init_embeddings)

    def build_datamodule(self) -> EdgeDataModule:
        return self.datamodule_factory(edges=self.graph.edges, num_nodes=self.graph.num_nodes)

    def load(self, checkpoint: str | Path) -> PoincareEmbedding:
        return PoincareEmbedding.restore(str(checkpoint))

    @torch.no_grad()
    def evaluate(self, model: PoincareEmbedding) -> dict[str, float]:
        """Reconstruction mean rank / MAP now and at the initialisation, norms, spread (collapse check)."""
        g, c = self.graph, model.curvature
        points, init = model.points.float(), model.anchor.float()
        now = reconstruction_metrics(points, g.edges.to(points.device), c, symmetric=self.eval_symmetric)
        start = reconstruction_metrics(init, g.edges.to(points.device), c, symmetric=self.eval_symmetric)
        gen = torch.Generator().manual_seed(0)
        i = torch.randint(0, g.num_nodes, (self.pairwise_sample,), generator=gen).to(points.device)
        j = torch.randint(0, g.num_nodes, (self.pairwise_sample,), generator=gen).to(points.device)
        radius = distance_to_origin(points, c)
        return {
            "map": now["map"], "mean_rank": now["mean_rank"],
            "map_init": start["map"], "mean_rank_init": start["mean_rank"],
            "mean_pairwise_distance": float(poincare_distance(points[i], points[j], c).mean()),
            "mean_pairwise_distance_init": float(poincare_distance(init[i], init[j], c).mean()),
            "mean_radius": float(radius.mean()), "max_norm": float(points.norm(dim=1).max() * c ** 0.5),
            "mean_distance_to_init": float(poincare_distance(points, init, c).mean()),
            "num_nodes": g.num_nodes, "num_relations": now["num_relations"],
        }

    def plot(self, model: PoincareEmbedding, path: str | Path) -> Path:
        g = self.graph
        edges = g.plot_edges if g.plot_edges is not None else g.edges
        return plot_poincare_disk(model.points, path, edges=edges, curvature=model.curvature, colors=g.colors,
                                  labels=g.labels, title=f"{self.name} · {self.data_name}")


class PassageGraphTask(PoincareTask):
    """Passages linked by shared OpenIE entities, initialised from their sentence embeddings.

    Args:
        dataset: a :class:`~hyperrag.data.Dataset` with an OpenIE file.
        encoder: a :class:`~hyperrag.embedding.TextEncoder`.
        graph: keyword arguments of :func:`~hyperrag.hyperbolic.graphs.shared_entity_edges`.
        (others): see :class:`PoincareTask`.
    """

    def __init__(self, dataset: Any, encoder: Encoder, model: Callable[..., PoincareEmbedding],
                 datamodule: Callable[..., EdgeDataModule], name: str = "poincare",
                 graph: SharedEntitySettings | None = None, eval_symmetric: bool = False) -> None:
        super().__init__(model, datamodule, name, eval_symmetric=eval_symmetric)
        self.dataset = dataset
        self.encoder = encoder
        self.graph_settings = dict(graph or {})
        self.data_name = dataset.name

    def build_graph(self) -> TaskGraph:
        from hyperrag.data import read_openie
        from hyperrag.errors import InputError

        ds = self.dataset
        if ds.openie_path is None:
            raise InputError(f"dataset {ds.name!r} has no OpenIE file; task {self.name!r} links passages "
                             "through their OpenIE entities", field="data.openie")
        openie = read_openie(ds.openie_path, ds.corpus)
        edges, _ = shared_entity_edges(openie, **self.graph_settings)
        if edges.shape[1] == 0:
            raise InputError("no two passages share an OpenIE entity: the passage graph is empty",
                             path=ds.openie_path)
        texts = [p.content for p in ds.corpus.passages]
        init = self.encoder.encode(texts, desc="passages")
        digest = stable_digest(self.graph_settings, edges, getattr(self.encoder, "model_key", ""),
                               text_digest("\x00".join(texts)))
        return TaskGraph(edges=edges, num_nodes=len(texts), init_embeddings=init,
                         labels=[p.title or p.id for p in ds.corpus.passages], digest=digest)


class HyperRAGGraphTask(PoincareTask):
    """HyperRAG's passage graph and ball, shared with ``retrieve.py method=hyperrag``.

    The ball index is built by :meth:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever.build` (LLM-free: the
    query graphs' counted stand-in) and trained here by ``train.py`` through the same resumable Lightning fit
    as :meth:`~hyperrag.hyperbolic.ball_index.BallIndex.train`, into the very folder the retriever looks in
    (same key); :meth:`saved` writes the graph, keywords and corpus manifest beside ``model.ckpt``.

    Args:
        dataset: a :class:`~hyperrag.data.Dataset` (corpus; its query file's questions become query nodes
            for the ``implicit`` / ``fused`` graphs, text only).
        encoder: a :class:`~hyperrag.embedding.TextEncoder`.
        retriever: the :class:`~hyperrag.retrievers.settings.HyperRAGSettings` of ``method.retriever``.
        device: where the retriever's tensors live (``hardware.device``).
        name: ``hyperrag`` — the ``models/`` folder the retriever reads.
    """

    def __init__(self, dataset: Any, encoder: Encoder, retriever: HyperRAGSettings, device: str,
                 name: str = "hyperrag", eval_symmetric: bool = False) -> None:
        from hyperrag.retrievers.hyperrag import HyperRAGRetriever

        super().__init__(None, None, name, eval_symmetric=eval_symmetric)  # type: ignore[arg-type]
        self.dataset = dataset
        self.retriever = HyperRAGRetriever(retriever, encoder=encoder, llm=None, device=device)
        self.data_name = f"{dataset.name}-{self.retriever.variant}"
        self.ball: Any = None

    def build_graph(self) -> TaskGraph:
        from hyperrag.retrievers.hyperrag_update import dataset_questions

        self.ball = ball = self.retriever.build(self.dataset)
        folder = self.retriever.ball_folder(self.dataset, dataset_questions(self.retriever.settings, self.dataset))
        g = ball.graph
        labels = [ball.table.label(i) for i in range(g.num_passages)] + [f"Q: {q}" for q in g.questions]
        colors = torch.cat([torch.zeros(g.num_passages), torch.ones(g.num_queries)])
        return TaskGraph(edges=ball.relations(), num_nodes=g.num_nodes,
                         plot_edges=g.forest(self.retriever.variant).edges.index, colors=colors, labels=labels,
                         digest=folder.name.rsplit("-", 1)[1])

    def key(self, **extra: Any) -> str:
        """The retriever's key (corpus, settings, questions, no LLM); ``extra`` is not used — the epochs are
        ``method.retriever.train.max_epochs`` (see :meth:`trainer_overrides`)."""
        return self.graph.digest

    def trainer_overrides(self) -> dict[str, Any]:
        return {"max_epochs": self.retriever.settings.train.max_epochs}

    def artifact(self) -> ArtifactRecord:
        """The query nodes are the query file's questions: HyperRAG builds its graphs from the question set by
        design, so the ball is transductive (retrieval says so instead of refusing)."""
        key = self.graph.digest  # builds the ball index: passage graph and query nodes
        questions = set(self.ball.graph.questions)
        seen = tuple(q.id for q in self.dataset.queries if q.question in questions)
        return ArtifactRecord(self.name, self.dataset.name, seen, key, transductive=bool(seen))

    def build_model(self) -> PoincareEmbedding:
        _ = self.graph
        return self.ball.new_model()

    def build_datamodule(self) -> EdgeDataModule:
        return self.ball.datamodule(self.graph.edges)

    def saved(self, model: PoincareEmbedding, model_dir: Path) -> None:
        """Beside ``model.ckpt``: the ball's graph, keyword sets and corpus manifest (what the retriever loads)."""
        self.ball.model = model
        self.ball.save(model_dir, with_model=False)


class TreeClosureTask(PoincareTask):
    """Transitive closure of a complete tree (descendant → ancestor), random initialisation.

    Args:
        branching: children per node.
        depth: levels below the root (4 and 6 give 5,461 nodes and 30,948 relations).
        (others): see :class:`PoincareTask`.
    """

    def __init__(self, model: Callable[..., PoincareEmbedding], datamodule: Callable[..., EdgeDataModule],
                 name: str = "poincare_tree", branching: PositiveInt = 4, depth: PositiveInt = 6,
                 eval_symmetric: bool = False) -> None:
        super().__init__(model, datamodule, name, eval_symmetric=eval_symmetric)
        self.branching, self.depth = branching, depth
        self.data_name = f"tree-b{branching}-d{depth}"

    def build_graph(self) -> TaskGraph:
        b, d = self.branching, self.depth
        return TaskGraph(edges=tree_closure(b, d), num_nodes=tree_size(b, d), plot_edges=tree_edges(b, d),
                         colors=tree_depths(b, d).float(), digest=stable_digest("tree", b, d))
