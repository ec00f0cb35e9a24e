"""HyperRAG's ball index: the passage table, the passage graph and the Poincaré ball, kept in step by one owner.

Node ``i < P`` of the graph is row ``i`` of the table and of the ball; query nodes follow (``P..P+Q-1``).
Everything that changes the rows goes through :class:`BallIndex`:

* :meth:`BallIndex.build` — the table (sentence embeddings from the encoder cache, YAKE keyword sets), the
  explicit keyword edges, the key-entity links and the query graphs of the given questions
  (:class:`~hyperrag.passage_graph.QueryGraphBuilder`, with the LLM or its counted stand-in); the ball is
  untrained;
* :meth:`BallIndex.train` — the whole ball through :func:`~hyperrag.utils.resume.fit_resumable`, the very
  path of ``train.py task=poincare`` (Lightning ``Trainer.fit``, resumable after a kill), saved in its folder;
* :meth:`BallIndex.train_touched` — only the nodes that changed (new, touched), every other row frozen by the
  gradient mask and put back bit-identical afterwards; a ``Trainer.fit`` too;
* :meth:`BallIndex.insert` / :meth:`BallIndex.delete` — passages join (keyword / entity edges of the new ones
  only, the trained forest pinned, new rows at the fitted Euclidean → ball projection, query graphs whose dense
  candidates now hold a new passage refreshed) or leave (with every edge touching them; orphaned forest
  children re-attached where an unpinned edge fits, query nodes whose graph held only deleted passages pruned);
* :meth:`BallIndex.add_queries` / :meth:`BallIndex.drop_queries` — query nodes join or leave (streaming);
* :meth:`BallIndex.save` / :meth:`BallIndex.load` — ``model.ckpt`` (Lightning layout), ``graph.json``,
  ``keywords.json``, ``corpus.json`` (per-passage content hashes and ids, the settings key, the questions key);
* :meth:`BallIndex.points` and :meth:`BallIndex.topk` — where a question sits in the ball and its nearest
  passages by hyperbolic distance.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.config.validation import as_dict
from hyperrag.data.types import Passage
from hyperrag.hyperbolic.distance import poincare_distance
from hyperrag.passage_graph.edges import EdgeSet
from hyperrag.passage_graph.graph import PassageGraph
from hyperrag.utils.hashing import passage_digest, text_digest

if TYPE_CHECKING:
    from hyperrag.hyperbolic.poincare_model import PoincareEmbedding
    from hyperrag.passage_graph.fusion import Forest
    from hyperrag.protocols import Encoder, LanguageModel
    from hyperrag.retrievers.settings import HyperRAGSettings

log = logging.getLogger(__name__)


@contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Train with ``n`` intra-op threads (as ``train.py``'s ``torch_threads``), then restore the count. The ball's
    steps are small: one thread avoids OpenMP wake-up stalls, which cost 10x and more on a busy 2-core machine."""
    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def _quiet_lightning() -> Iterator[None]:
    names = ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")
    levels = [logging.getLogger(n).level for n in names]
    for n in names:
        logging.getLogger(n).setLevel(logging.WARNING)
    try:
        yield
    finally:
        for n, level in zip(names, levels):
            logging.getLogger(n).setLevel(level)


def passage_hash(p: Passage) -> str:
    """16 hex digits of a passage's id, title and text (how a saved ball recognises its passages)."""
    return passage_digest(p, length=16)


def questions_key(questions: Sequence[str]) -> str:
    return text_digest("\x00".join(questions), length=16)


@dataclass
class PassageTable:
    """The ball's passages, row ``i`` = node ``i``.

    Attributes:
        ids / hashes: passage ids and :func:`passage_hash` values.
        titles: titles (``""`` when a passage has none: no key entity).
        texts: title + text, what the LLM is shown and keywords are taken from.
        embeddings: FloatTensor [P, D] unit-norm sentence embeddings.
        keyword_sets: P YAKE keyword sets.
    """

    ids: list[str]
    hashes: list[str]
    titles: list[str]
    texts: list[str]
    embeddings: torch.Tensor
    keyword_sets: list[frozenset[str]]

    @classmethod
    def of(cls, passages: Sequence[Passage], embeddings: torch.Tensor, keyword_sets: Sequence[frozenset[str]]
           ) -> PassageTable:
        return cls([p.id for p in passages], [passage_hash(p) for p in passages], [p.title or "" for p in passages],
                   [p.content for p in passages], embeddings.float(), list(keyword_sets))

    def __len__(self) -> int:
        return len(self.ids)

    def label(self, i: int) -> str:
        return self.titles[i] or self.ids[i]

    def append(self, other: PassageTable) -> None:
        for name in ("ids", "hashes", "titles", "texts", "keyword_sets"):
            getattr(self, name).extend(getattr(other, name))
        self.embeddings = torch.cat([self.embeddings, other.embeddings.to(self.embeddings)])

    def keep(self, mask: torch.Tensor) -> None:
        """Keep the rows where ``mask`` [P] is True."""
        flags = mask.tolist()
        for name in ("ids", "hashes", "titles", "texts", "keyword_sets"):
            setattr(self, name, [x for x, k in zip(getattr(self, name), flags) if k])
        self.embeddings = self.embeddings[mask]


@dataclass
class BallIndex:
    """Args:
        settings: the retriever's :class:`~hyperrag.retrievers.settings.HyperRAGSettings`.
        table: the passages.
        graph: the passage graph (explicit, entity and query-guided edges; query nodes).
        encoder: sentence embedder (new passages, questions, new queries of later rounds).
        llm: the LLM of the query graphs (``None``: the stand-in, counted in :attr:`skipped`).
        model: the ball (``None`` until :meth:`new_model` / :meth:`train` / :meth:`load`).
        device: where the ball trains and ranks (``cpu`` / ``cuda``).
    """

    settings: HyperRAGSettings
    table: PassageTable
    graph: PassageGraph
    encoder: Encoder
    llm: LanguageModel | None = None
    model: PoincareEmbedding | None = None
    device: str = "cpu"
    #: configured LLM steps of the query graphs that did not run, by step
    skipped: Counter = field(default_factory=Counter)
    #: nodes that changed (new passages and query nodes, endpoints of new edges) and await training
    touched: set[int] = field(default_factory=set)
    #: digest of every setting that shapes the ball (written to ``corpus.json``; the retriever sets it)
    settings_key: str = ""
    #: the query graphs built at index time (transductive), by question; kept in memory only (a loaded ball has
    #: none): they feed the rows of what the ball adds, never the ranking
    index_graphs: dict[str, Any] = field(default_factory=dict)

    @property
    def variant(self) -> str:
        return self.settings.graph

    @property
    def keyword_cache(self) -> Path | None:
        return Path(self.settings.index_root) / "hyperrag" if self.settings.index_root else None

    # ---- building ----------------------------------------------------------------------------------------
    @classmethod
    def build(cls, passages: Sequence[Passage], questions: Sequence[str], settings: HyperRAGSettings,
              encoder: Encoder, llm: LanguageModel | None = None, device: str = "cpu") -> BallIndex:
        """Table, keyword and entity edges, query graphs of ``questions`` (Algorithm 1, lines 1–8)."""
        table = cls._table(passages, settings, encoder)
        graph = PassageGraph(len(table), implicit_first=settings.fusion == "implicit_first",
                             entity_merge=settings.key_entity.fusion == "merge", after_update=settings.update.fusion)
        ball = cls(settings, table, graph, encoder, llm, device=device)
        ball._link_passages(0)
        if questions:
            _, graphs = ball._add_query_graphs(list(questions), encoder.encode(list(questions), desc="queries"),
                                               index_time=True)
            ball.index_graphs = dict(zip(questions, graphs))
        return ball

    @staticmethod
    def _table(passages: Sequence[Passage], settings: HyperRAGSettings, encoder: Encoder,
               show_progress: bool = True) -> PassageTable:
        from hyperrag.passage_graph import extract_keywords

        texts = [p.content for p in passages]
        cache = Path(settings.index_root) / "hyperrag" if settings.index_root else None
        emb = encoder.encode(texts, desc="passages")
        kw = extract_keywords(texts, settings.keywords, cache_dir=cache, show_progress=show_progress)
        return PassageTable.of(passages, emb, kw)

    def _link_passages(self, first: int) -> tuple[EdgeSet, EdgeSet]:
        """Keyword and key-entity edges of the passages ``first..`` (all when 0); added to the graph."""
        from hyperrag.passage_graph import key_entity_edges, keyword_edges, keyword_edges_incremental

        t, s = self.table, self.settings
        if first == 0:
            explicit = keyword_edges(t.keyword_sets, s.explicit)
        else:
            explicit = keyword_edges_incremental(t.keyword_sets, first, self.graph.explicit, s.explicit)
        entity = key_entity_edges(t.titles, t.texts, s.key_entity, first=first)
        if first == 0:
            self.graph.explicit, self.graph.entity = explicit, entity
        return explicit, entity

    @property
    def query_nodes(self) -> bool:
        """Questions are nodes of their query graphs (the labelled question-root variant; the paper's query graph
        has passages only)."""
        return self.settings.query_graph == "question_root"

    def builder(self):  # type: ignore[no-untyped-def]
        """A query-graph builder over the current table."""
        from hyperrag.passage_graph import QueryGraphBuilder

        return QueryGraphBuilder(self.table.embeddings, self.table.texts, self.settings.implicit,
                                 encoder=self.encoder, llm=self.llm, keyword_sets=self.table.keyword_sets,
                                 query_nodes=self.query_nodes)

    def _add_query_graphs(self, questions: list[str], query_emb: torch.Tensor, index_time: bool
                          ) -> tuple[EdgeSet, list[Any]]:
        """Build and add the query graphs of new questions (query nodes ``num_nodes..``). ``index_time``: a stage
        of the index build, stopped when every LLM call failed (streaming at retrieval time keeps its stand-in)."""
        builder = self.builder()
        edges, graphs = builder.build(questions, query_emb, query_offset=self.graph.num_queries,
                                      num_passages=self.graph.num_passages)
        if index_time:
            builder.stop_if_nothing_succeeded()
        self.graph.add_queries(questions, edges, nodes=self.query_nodes)
        self.skipped.update(builder.skipped)
        stats = self.graph.stats
        stats["llm_calls"] = stats.get("llm_calls", 0) + builder.llm_calls
        stats["query_graphs_by_llm"] = stats.get("query_graphs_by_llm", 0) + sum(g.llm for g in graphs)
        stats["query_graphs_by_stand_in"] = stats.get("query_graphs_by_stand_in", 0) + sum(not g.llm for g in graphs)
        stats["llm_steps_skipped"] = dict(Counter(stats.get("llm_steps_skipped", {})) + builder.skipped)
        return edges, graphs

    # ---- the ball ----------------------------------------------------------------------------------------
    def relations(self) -> torch.Tensor:
        """LongTensor [2, R]: the training relations (forest edges both ways + the query closure)."""
        s = self.settings
        return self.graph.relations(self.variant, s.query_closure_depth, s.query_edge_repeat)

    def new_model(self) -> PoincareEmbedding:
        """An untrained ball: passages then query nodes at their projected sentence embeddings."""
        from hyperrag.hyperbolic import PoincareEmbedding

        q = self.graph.questions
        q_emb = (self.encoder.encode(q, desc="queries") if q
                 else self.table.embeddings.new_empty(0, self.table.embeddings.shape[1]))
        init = torch.cat([self.table.embeddings, q_emb.to(self.table.embeddings)])
        self.model = PoincareEmbedding(init.shape[0], init_embeddings=init, seed=self.settings.train.seed,
                                       num_passages=self.graph.num_passages, **as_dict(self.settings.model))
        return self.model

    def datamodule(self, relations: torch.Tensor, seed_offset: int = 0,
                   batch_size: int | None = None):  # type: ignore[no-untyped-def]
        """The relations as batches (``batch_size``; ``None``: ``train.batch_size``) with Nickel & Kiela negatives
        (known relations excluded both ways)."""
        from hyperrag.hyperbolic import EdgeDataModule

        ts = self.settings.train
        return EdgeDataModule(relations, self.graph.num_nodes, batch_size=batch_size or ts.batch_size,
                              num_negatives=ts.num_negatives, negative_group_size=ts.negative_group_size,
                              exclude="both", seed=ts.seed + seed_offset)

    def _trainer(self, max_epochs: int, progress: bool):  # type: ignore[no-untyped-def]
        import lightning as L

        accelerator = "gpu" if str(self.device).startswith("cuda") else "cpu"
        return lambda kw: L.Trainer(max_epochs=max_epochs, accelerator=accelerator, devices=1, logger=False,
                                    enable_model_summary=False, enable_progress_bar=progress,
                                    num_sanity_val_steps=0, **{"enable_checkpointing": False, **kw})

    def train(self, folder: Path):  # type: ignore[no-untyped-def]
        """Train the whole ball (``train.max_epochs``) into ``folder`` — ``train.py task=poincare``'s path:
        resumable (an interrupted fit of the same folder continues from ``.partial/last.ckpt``), ``model.ckpt``
        written by the trainer; then the graph, keywords and manifest beside it. Returns the
        :class:`~hyperrag.utils.resume.FitRun`."""
        from hyperrag.utils.resume import fit_resumable

        model = self.new_model()
        rel = self.relations()
        with _torch_threads(self.settings.train.torch_threads):
            run = fit_resumable(model, self.datamodule(rel), folder,
                                self._trainer(self.settings.train.max_epochs, True), resume={"every_seconds": 60})
        model.cpu()
        (folder / "meta.json").write_text(json.dumps({"graph": self.variant, "relations": int(rel.shape[1]),
                                                      "train": as_dict(self.settings.train),
                                                      "model": as_dict(self.settings.model)}, indent=1))
        self.save(folder, with_model=False)
        return run

    def train_touched(self, epochs: int, seed_offset: int = 0, batch_size: int | None = None) -> dict[str, Any]:
        """Train the relations touching :attr:`touched` for ``epochs`` epochs (a ``Trainer.fit``, ``batch_size``
        relations a step; ``None``: ``train.batch_size``), every other row frozen and put back bit-identical; then
        nothing is touched. Returns ``trained_nodes``, ``relations``, ``train_s``."""
        assert self.model is not None
        n = self.graph.num_nodes
        mask = torch.zeros(n, dtype=torch.bool)
        if self.touched:
            mask[torch.tensor(sorted(self.touched), dtype=torch.long)] = True
        self.touched = set()
        rel = self.relations()
        rel = rel[:, mask[rel[0]] | mask[rel[1]]]
        stats: dict[str, Any] = {"trained_nodes": int(mask.sum()), "relations": int(rel.shape[1])}
        if not rel.shape[1] or epochs <= 0:
            return stats
        model = self.model
        model.set_trainable(mask)
        frozen = ~mask.to(model.embeddings.device)
        before = model.embeddings.data[frozen].clone()
        start = model.embeddings.data[~frozen].clone()
        t0 = time.perf_counter()
        model.train()
        # an update is a small fit: one thread, and no banner about accelerators each time
        with _torch_threads(self.settings.train.torch_threads), _quiet_lightning():
            trainer = self._trainer(epochs, False)({})
            trainer.fit(model, self.datamodule(rel, seed_offset, batch_size))
        model.set_trainable(None)
        # a zero gradient is a zero step, but a retraction may still round the last bit: frozen rows go back
        frozen = frozen.to(model.embeddings.device)
        model.embeddings.data[frozen] = before.to(model.embeddings.device)
        model.to(self.device).eval()
        stats["train_s"] = round(time.perf_counter() - t0, 3)
        stats["steps"] = int(trainer.global_step)
        stats["moved"] = float(poincare_distance(model.embeddings.data[~frozen.to(model.embeddings.device)],
                                                 start.to(model.embeddings.device), model.curvature).mean())
        return stats

    # ---- corpus updates ----------------------------------------------------------------------------------
    def insert(self, passages: Sequence[Passage], epochs: int, refresh_queries: bool = True) -> dict[str, Any]:
        """Append passages; only the new and touched nodes train (see the module docstring). Returns stats."""
        assert self.model is not None, "train or load the ball first"
        t0 = time.perf_counter()
        known = set(self.table.ids)
        ids = [p.id for p in passages]
        dup = [i for i in ids if i in known] + [i for n, i in enumerate(ids) if i in ids[:n]]
        if dup:
            raise ValueError(f"passage ids already in the corpus: {sorted(set(dup))[:5]}")
        if not passages:
            return {"inserted": 0, "new_edges": 0, "trained_nodes": 0, "relations": 0, "seconds": 0.0}
        new = self._table(passages, self.settings, self.encoder, show_progress=False)
        t_features = time.perf_counter()
        first, count = len(self.table), len(new)
        before = self.graph.pin(self.variant)
        self.table.append(new)
        explicit, entity = self._link_passages(first)
        p, n = self.graph.num_passages, self.graph.num_nodes
        self.graph.add_passages(count, explicit, entity)
        source = torch.cat([torch.arange(p), torch.full((count,), -1), torch.arange(p, n)])
        self.model.remap_nodes(source, self.model.embed(new.embeddings.to(self.model.device)))
        self.model.hparams["num_passages"] = self.graph.num_passages
        self.touched = {t + count if t >= p else t for t in self.touched} | set(range(first, first + count))
        for e in (explicit, entity):
            self.touched.update(e.parent.tolist() + e.child.tolist())
        refreshed = self._refresh_query_graphs(first, count) if refresh_queries else (0, 0)
        reparented = _reparented(before, self.graph.forest(self.variant), source) - self.touched
        self.touched |= reparented  # e.g. a pinned keyword child a new query edge took (update.fusion: query_first)
        t_graph = time.perf_counter()
        trained = sorted(self.table.ids[t] for t in self.touched if t < self.graph.num_passages)
        stats = self.train_touched(epochs)
        t1 = time.perf_counter()
        return {"inserted": count, "new_edges": len(explicit), "entity_edges": len(entity),
                "refreshed_queries": refreshed[0], "refresh_edges": refreshed[1], "reparented": len(reparented),
                "trained_nodes": stats["trained_nodes"], "relations": stats["relations"],
                "trained_passages": trained, "seconds": round(t1 - t0, 3), "embed_keywords_s": round(t_features - t0, 3),
                "graph_s": round(t_graph - t_features, 3), "train_s": round(t1 - t_graph, 3)}

    def _refresh_query_graphs(self, first: int, count: int) -> tuple[int, int]:
        """Query nodes whose dense candidates (top ``implicit.top_k``) now include a new passage get their query
        graph rebuilt; its edges touching a new passage join the graph (query node and endpoints touched).
        Returns (queries, edges)."""
        graph = self.graph
        questions = graph.questions if self.query_nodes else graph.graph_questions
        if not questions or first == 0:
            return 0, 0
        q_emb = self.encoder.encode(questions, desc="queries").float()
        sims = q_emb @ self.table.embeddings.T  # [Q, P + count]: the builder's dense candidates are its top-k
        kth = sims[:, :first].topk(min(self.settings.implicit.top_k, first), dim=1).values[:, -1]
        affected = torch.nonzero(sims[:, first:first + count].max(1).values >= kth).flatten().tolist()
        if not affected:
            return 0, 0
        p = graph.num_passages
        builder = self.builder()
        edges, graphs = builder.build([questions[j] for j in affected], q_emb[affected], num_passages=p)
        builder.stop_if_nothing_succeeded()
        self.skipped.update(builder.skipped)
        if self.query_nodes:
            qmap = torch.tensor([p + j for j in affected], dtype=torch.long)
            node = lambda t: torch.where(t >= p, qmap[(t - p).clamp(0, len(affected) - 1)], t)
            edges = EdgeSet(node(edges.parent), node(edges.child), edges.weight, edges.relation)
        is_new = lambda t: (t >= first) & (t < first + count)
        edges = edges.select(is_new(edges.parent) | is_new(edges.child))
        if len(edges):
            graph.add_queries([], edges)
            self.touched.update(edges.parent.tolist() + edges.child.tolist())
        if self.query_nodes:
            return len({int(x) for x in edges.parent.tolist() if x >= p}), len(edges)
        fresh = set(range(first, first + count))
        return sum(bool(fresh & set(g.passages)) for g in graphs), len(edges)

    def delete(self, passage_ids: Sequence[str], epochs: int) -> dict[str, Any]:
        """Remove passages (unknown ids are ignored) from the table, the graph and the ball. Returns stats."""
        assert self.model is not None, "train or load the ball first"
        t0 = time.perf_counter()
        pos = {pid: i for i, pid in enumerate(self.table.ids)}
        gone = sorted({pos[x] for x in passage_ids if x in pos})
        if not gone:
            return {"deleted": 0, "pruned_queries": 0, "reattached": 0, "roots": 0, "seconds": 0.0}
        graph = self.graph
        gone_set = set(gone)
        forest = graph.pin(self.variant)
        orphaned = {c for p, c in zip(forest.edges.parent.tolist(), forest.edges.child.tolist())
                    if p in gone_set and c not in gone_set}
        orphan_q = [q for q, nodes in enumerate(graph.query_passages()) if nodes and nodes <= gone_set]
        keep = torch.ones(graph.num_passages, dtype=torch.bool)
        keep[gone] = False
        source = graph.drop_passages(keep)
        dropped_questions = [graph.questions[q] for q in orphan_q]
        if orphan_q:
            keep_q = torch.ones(graph.num_queries, dtype=torch.bool)
            keep_q[orphan_q] = False
            source = source[graph.drop_queries(keep_q)]
        self.model.remap_nodes(source)
        self.model.hparams["num_passages"] = graph.num_passages
        self.table.keep(keep)
        new_id = {int(old): new for new, old in enumerate(source.tolist())}
        self.touched = {new_id[t] for t in self.touched if t in new_id}
        after = graph.forest(self.variant)
        moved = {new_id[c] for c in orphaned if int(after.parent[new_id[c]]) >= 0}
        changed = _reparented(forest, after, source) | moved
        stats: dict[str, Any] = {}
        if changed:
            self.touched |= changed
            stats = self.train_touched(epochs)
        return {"deleted": len(gone), "pruned_queries": len(orphan_q),
                "pruned_questions": dropped_questions, "reattached": len(moved), "reparented": len(changed - moved),
                "roots": len(orphaned) - len(moved), "trained_nodes": stats.get("trained_nodes", 0),
                "trained_passages": sorted(self.table.ids[t] for t in changed if t < graph.num_passages),
                "seconds": round(time.perf_counter() - t0, 3)}

    # ---- query nodes (streaming) -------------------------------------------------------------------------
    def add_queries(self, questions: list[str], query_emb: torch.Tensor) -> list[Any]:
        """The query graphs of new questions join the graph (Algorithm 1 lines 1–8 for each, from its text alone);
        in the question-root variant each question is also a new node, starting at its projected embedding. The
        new nodes, the graphs' endpoints and the passages they are merged with (or linked to) on a key entity are
        touched (trained by the next :meth:`train_touched`). Returns the :class:`QueryGraph` of each question."""
        assert self.model is not None
        first = self.graph.num_nodes
        edges, graphs = self._add_query_graphs(questions, query_emb, index_time=False)
        if self.query_nodes:
            source = torch.cat([torch.arange(first), torch.full((len(questions),), -1)])
            self.model.remap_nodes(source, self.model.embed(query_emb))
            self.touched |= set(range(first, first + len(questions)))
        ends = set(edges.parent.tolist()) | set(edges.child.tolist())
        self.touched |= ends
        if self.variant == "fused":
            linked = self.graph.entity_links(edges)
            self.touched |= set(linked.parent.tolist()) | set(linked.child.tolist())
        return graphs

    def drop_queries(self, keep: torch.Tensor) -> None:
        """Remove query nodes (``keep`` [Q] False) from the graph and the ball."""
        assert self.model is not None
        source = self.graph.drop_queries(keep)
        self.model.remap_nodes(source)
        new_id = {int(old): new for new, old in enumerate(source.tolist())}
        self.touched = {new_id[t] for t in self.touched if t in new_id}

    # ---- persistence -------------------------------------------------------------------------------------
    def save(self, folder: Path, with_model: bool = True, settings_key: str = "") -> Path:
        """Write the ball's folder (see the module docstring); returns ``model.ckpt``'s path."""
        from hyperrag.utils.atomic import atomic_write_json
        from hyperrag.utils.resume import MODEL_FILE, save_module_checkpoint

        folder.mkdir(parents=True, exist_ok=True)
        if with_model:
            assert self.model is not None
            save_module_checkpoint(self.model, folder / MODEL_FILE)
        atomic_write_json(folder / "graph.json", self.graph.to_dict())
        atomic_write_json(folder / "keywords.json", [sorted(k) for k in self.table.keyword_sets])
        atomic_write_json(folder / "corpus.json", {"settings": settings_key or self.settings_key,
                                                   "questions": questions_key(self.graph.graph_questions),
                                                   "passages": self.table.hashes, "ids": self.table.ids})
        return folder / MODEL_FILE

    @classmethod
    def load(cls, folder: Path, passages: Sequence[Passage | None], settings: HyperRAGSettings, encoder: Encoder,
             llm: LanguageModel | None = None, device: str = "cpu") -> BallIndex:
        """A saved ball over ``passages`` (its passages in its order; ``None`` for one that is about to be
        deleted and whose text is gone — it gets its saved id and hash, empty text, a zero embedding, and must
        be deleted before anything reads it)."""
        from hyperrag.hyperbolic import PoincareEmbedding

        saved = json.loads((folder / "corpus.json").read_text())
        if len(passages) != len(saved["passages"]):
            raise ValueError(f"{folder}: {len(passages)} passages given for a ball over {len(saved['passages'])}")
        ids = list(saved.get("ids") or [""] * len(passages))
        known = [p for p in passages if p is not None]
        emb = encoder.encode([p.content for p in known], desc="passages").float()
        if len(known) < len(passages):
            full = emb.new_zeros(len(passages), emb.shape[1])
            full[torch.tensor([p is not None for p in passages])] = emb
            emb = full
        keywords = [frozenset(k) for k in json.loads((folder / "keywords.json").read_text())]
        table = PassageTable([p.id if p is not None else ids[i] for i, p in enumerate(passages)],
                             [passage_hash(p) if p is not None else saved["passages"][i]
                              for i, p in enumerate(passages)],
                             [(p.title or "") if p is not None else "" for p in passages],
                             [p.content if p is not None else "" for p in passages], emb, keywords)
        graph = PassageGraph.from_dict(json.loads((folder / "graph.json").read_text()))
        graph.after_update = settings.update.fusion  # part of the settings key: the saved ball was updated so too
        model = PoincareEmbedding.restore(str(folder / "model.ckpt"))
        if graph.num_nodes != model.points.shape[0] or len(keywords) != len(table):
            raise ValueError(f"{folder}: the saved graph / keywords do not match the ball or the corpus")
        ball = cls(settings, table, graph, encoder, llm, model, device)
        ball.skipped.update(graph.stats.get("llm_steps_skipped", {}))
        return ball

    # ---- ranking -----------------------------------------------------------------------------------------
    @torch.no_grad()
    def points(self, query_emb: torch.Tensor, questions: Sequence[str] | None = None,
               rule: str = "projected") -> torch.Tensor:
        """[B, D] ball points of questions: the sentence embedding projected into the ball by the fitted map
        (``projected``, the paper's rule); with ``trained`` a question that is a query node takes its trained
        node instead (transductive)."""
        assert self.model is not None, "train or load the ball first"
        q = self.model.embed(query_emb.to(self.model.device))
        if rule == "trained" and questions is not None and self.graph.num_queries:
            node = {t: self.graph.num_passages + i for i, t in enumerate(self.graph.questions)}
            rows = [(b, node[t]) for b, t in enumerate(questions) if t in node]
            if rows:
                b_idx = torch.tensor([b for b, _ in rows], device=q.device)
                n_idx = torch.tensor([n for _, n in rows], device=q.device)
                q[b_idx] = self.model.points[n_idx].to(q.dtype)
        return q

    @torch.no_grad()
    def topk(self, points: torch.Tensor, k: int, scopes: Sequence[Sequence[int]] | None = None,
             untrained: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """The ``k`` passages nearest to each point: (indices [B, k], hyperbolic distances [B, k]).

        Args:
            points: FloatTensor [B, D] ball points (:meth:`points`).
            k: passages per point.
            scopes: per point, passages ranked first (``rank_scope: query_graph``: the question's query graph
                ``V_i``), by hyperbolic distance, then the rest of the corpus by the same rule; ``None``: the
                whole corpus by distance.
            untrained: rank against the passages' projected starting points (``model.anchor``: the ball before
                any training, epoch 0) instead of their trained positions.
        """
        from hyperrag.hyperbolic import topk_poincare
        from hyperrag.hyperbolic.distance import poincare_distance

        assert self.model is not None
        p = self.graph.num_passages
        table = (self.model.anchor if untrained else self.model.points)[:p]
        c = self.model.curvature
        if scopes is None:
            return topk_poincare(points, table, k, curvature=c)
        out_idx, out_dist = [], []
        for b in range(points.shape[0]):
            first = torch.tensor(sorted({int(x) for x in scopes[b] if 0 <= int(x) < p}), dtype=torch.long,
                                 device=table.device)
            idx, dist = topk_poincare(points[b:b + 1], table, min(p, k + len(first)), curvature=c)
            idx, dist = idx[0], dist[0]
            if len(first):
                d_first = poincare_distance(points[b:b + 1], table[first], c)
                order = torch.argsort(d_first, stable=True)
                rest = ~torch.isin(idx, first)
                idx = torch.cat([first[order], idx[rest]])
                dist = torch.cat([d_first[order], dist[rest]])
            out_idx.append(idx[:k])
            out_dist.append(dist[:k])
        return torch.stack(out_idx), torch.stack(out_dist)

    @torch.no_grad()
    def mean_distance_moved(self) -> float:
        """Mean hyperbolic distance of the passages from their initial (projected) positions."""
        from hyperrag.hyperbolic.distance import poincare_distance

        assert self.model is not None
        p = self.graph.num_passages
        return float(poincare_distance(self.model.points[:p], self.model.anchor[:p], self.model.curvature).mean())


def _reparented(before: Forest, after: Forest, source: torch.Tensor) -> set[int]:
    """Nodes (new ids) that have a parent in ``after`` other than their parent in ``before``.

    Args:
        before: the forest before an update (old ids).
        after: the forest after it (new ids).
        source: LongTensor [N'], each new node's old id (-1: a new node).
    """
    src = source.tolist()
    new_of = {old: new for new, old in enumerate(src) if old >= 0}
    old_par, new_par = before.parent.tolist(), after.parent.tolist()
    out = set()
    for new, old in enumerate(src):
        if new_par[new] < 0:
            continue
        was = old_par[old] if old >= 0 else -1
        if was < 0 or new_of.get(was, -1) != new_par[new]:
            out.add(new)
    return out
