"""HyperRAG: passages (and queries) in a Poincaré ball trained on keyword / query-guided / fused trees.

Index (:meth:`HyperRAGRetriever.index`):
  1. sentence embeddings of the passages (encoder cache) and YAKE keyword sets (cached);
  2. explicit edges — keyword overlap ``|Ki ∩ Kj| / min(|Ki|, |Kj|) ≥ θ``, ≤ 3 neighbours, inverted index;
  3. implicit edges — query graphs of the questions of the query file being retrieved (``implicit_queries:
     query_file``; question text only — the query-centric setting of the paper, where the query graph is
     built at query time; gold labels are never read) or none (``implicit_queries: none``; with streaming on,
     query graphs then arrive at retrieval time). Without an LLM the missing-concept round is the
     pseudo-relevance-feedback stand-in (question + the best passage's new YAKE keywords → new passages,
     linked *expand* from that passage), which is what brings second-hop passages into a query's tree;
  4. the ``graph`` variant's forest (explicit, implicit or their tree fusion, query trees first), and the
     training relations: forest edges + query node ↔ descendants up to ``query_closure_depth``;
  5. the Poincaré ball: loaded from ``models/hyperrag/<data>-<graph>-<key>/model.ckpt`` (key = hash of the
     corpus, the forest, the query nodes and every model / training setting), or trained with
     ``lightning.Trainer.fit`` (geoopt Riemannian Adam, Nickel & Kiela negatives + the semantic anchor term)
     and saved there.

Query batch (:meth:`HyperRAGRetriever.retrieve`):
  * single step — each question's point in the ball: its **trained query node** when the question was a node
    at index time (``query_position: trained``; query nodes have their own, weak anchor, so they have moved
    towards their linked first- and second-hop passages), else its sentence embedding mapped by the model's
    fitted Euclidean → ball map (the very map that initialised the passages); top-k passages by **hyperbolic
    distance** to that point (:func:`topk_poincare`, blocked, on the configured device); score =
    ``-distance``. Nothing but the distance ranks;
  * multi-step (``multi_step: true`` and an LLM) — ``query_refinement`` (decompose) splits the question into
    sub-questions; they are retrieved in order, ``#j`` in a later sub-question replaced by the title of the
    best passage of sub-question ``j``; synthesis: every passage keeps its smallest distance to the question
    or any sub-question, and the top-k of that are returned. Without an LLM: single step;
  * streaming (``streaming.enabled``) — new questions' query graphs join the graph and every
    ``update_frequency`` questions the new and touched nodes are trained, the rest frozen
    (:class:`~hyperrag.hyperbolic.streaming.StreamingBall`).

Corpus updates (:meth:`HyperRAGRetriever.insert` / :meth:`~HyperRAGRetriever.delete` /
:meth:`~HyperRAGRetriever.save_update`, :mod:`hyperrag.retrievers.hyperrag_update`): new passages join the
trained ball and only new + touched nodes train; deleted passages leave it. An updated ball is saved as
``<base folder>/gen-N/``. :meth:`~HyperRAGRetriever.index` first looks for a saved ball (same settings and
questions) whose corpus is the dataset's, or becomes it by deleting some of its passages and appending new
ones: loaded, updated incrementally, saved as the next generation — unless less than ``update.min_reuse`` of the
corpus would be reused (then: trained from scratch). ``info["loaded_from"]``: ``exact`` | ``prefix`` |
``updated`` | ``trained``.

Index directories (``retrieve.py method=hyperrag index_dir=DIR``): the dataset is the index's passages in index
order (:func:`hyperrag.index.passages.dataset_for_index`); the ball follows the index through
``python -m hyperrag.index build / insert / delete`` by the update path above.
"""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.config.validation import as_dict
from hyperrag.data.types import Dataset
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs
from hyperrag.retrievers.settings import HyperRAGSettings
from hyperrag.utils.hashing import stable_digest

log = logging.getLogger(__name__)




class HyperRAGRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.HyperRAGSettings` — the graph variant (``graph``), the
            passage graph (``keywords``, ``explicit``, ``implicit``, ``implicit_queries``, ``fusion``), the
            training relations (``query_closure_depth``, ``query_edge_repeat``), the ball and its training
            (``model``, ``train``), ranking (``query_position``, ``multi_step``, ``max_sub_questions``),
            ``streaming``, corpus updates (``update_epochs``, ``update``), ``models_dir``, ``index_root``,
            ``retrain``.
        encoder: sentence embedder (passages, questions, missing concepts).
        llm: the framework's LLM (passage selection / relations / missing concepts, decomposition);
            ``None`` / ``NoLLM``: the documented stand-ins and single-step retrieval.
        device: ``auto`` / ``cpu`` / ``cuda`` for the ball and the top-k.
        index_dir: retrieve over this knowledge-graph index directory's passages (the dataset must list them in
            index order, as ``retrieve.py index_dir=DIR`` does); the ball follows the index's inserts/deletes.
    """

    name = "hyperrag"
    supports_index_dir = True
    settings: HyperRAGSettings

    def __init__(self, settings: HyperRAGSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.updated_passage_ids: set[str] = set()
        self.model = None
        self.stream = None
        self.info: dict[str, Any] = {}

    @property
    def variant(self) -> str:
        """The forest the ball is trained on: ``explicit`` | ``implicit`` | ``fused``."""
        return self.settings.graph

    @property
    def models_dir(self) -> Path:
        return Path(self.settings.models_dir)

    @property
    def keyword_cache(self) -> Path | None:
        """Where YAKE keyword sets are cached (``<index_root>/hyperrag``), or None."""
        return Path(self.settings.index_root) / "hyperrag" if self.settings.index_root else None

    # ---- indexing ----------------------------------------------------------------------------------------
    def prepare(self, dataset: Dataset) -> dict[str, Any]:
        """Everything the ball is trained on, without training it (``train.py task=poincare`` uses this too).

        Builds the passage graph (explicit keyword edges; for ``implicit``/``fused`` the query graphs of the
        query file's questions) and returns ``relations`` [2, R], ``init`` [N, D] (passage then question
        embeddings), ``path`` of the checkpoint and its ``key``. Sets ``self.graph``.
        """
        from hyperrag.index.kg_index import corpus_fingerprint
        from hyperrag.passage_graph import PassageGraph, QueryGraphBuilder, extract_keywords, keyword_edges
        from hyperrag.retrievers.hyperrag_update import passage_hash

        self.dataset_name = dataset.name
        passages = dataset.corpus.passages
        self.passage_ids = [p.id for p in passages]
        self.passage_hashes = [passage_hash(p) for p in passages]
        self.texts = [p.content for p in passages]
        self.titles = [p.title or p.id for p in passages]
        self.passage_emb = self.encoder.encode(self.texts, desc="passages")
        s = self.settings
        self.keyword_sets = extract_keywords(self.texts, s.keywords, cache_dir=self.keyword_cache)
        graph = PassageGraph(len(self.texts), explicit=keyword_edges(self.keyword_sets, s.explicit),
                             implicit_first=s.fusion == "implicit_first")
        self.builder = QueryGraphBuilder(self.passage_emb, self.texts, s.implicit, encoder=self.encoder,
                                         llm=self.llm, keyword_sets=self.keyword_sets)
        questions: list[str] = []
        if s.implicit_queries == "query_file" and self.variant != "explicit":
            questions = list(dict.fromkeys(q.question for q in dataset.queries))
        self.base_questions = questions
        query_emb = torch.empty(0, self.passage_emb.shape[1])
        if questions:
            query_emb = self.encoder.encode(questions, desc="queries")
            edges, qgraphs = self.builder.build(questions, query_emb)
            graph.add_queries(questions, edges)
            graph.stats["query_graphs_by_llm"] = sum(g.llm for g in qgraphs)
            graph.stats["query_graphs_by_stand_in"] = sum(not g.llm for g in qgraphs)
        graph.stats["llm_calls"] = self.builder.llm_calls
        self.graph = graph
        relations = graph.relations(self.variant, s.query_closure_depth, s.query_edge_repeat)
        key = stable_digest(corpus_fingerprint(dataset), getattr(self.encoder, "model_key", ""), self.variant,
                            relations, questions, as_dict(s.model), as_dict(s.train), length=10)
        path = self.models_dir / "hyperrag" / f"{dataset.name}-{self.variant}-{key}" / "model.ckpt"
        return {"relations": relations, "init": torch.cat([self.passage_emb, query_emb]), "path": path,
                "key": key}

    def new_model(self, init: torch.Tensor):  # type: ignore[no-untyped-def]
        """An untrained ball over ``init``'s rows (passages, then query nodes with their own anchor weight)."""
        from hyperrag.hyperbolic import PoincareEmbedding

        return PoincareEmbedding(init.shape[0], init_embeddings=init, seed=self.settings.train.seed,
                                 num_passages=self.graph.num_passages, **as_dict(self.settings.model))

    def datamodule(self, relations: torch.Tensor, num_nodes: int):  # type: ignore[no-untyped-def]
        """The training relations as batches with Nickel & Kiela negatives (known relations excluded)."""
        from hyperrag.hyperbolic import EdgeDataModule

        ts = self.settings.train
        return EdgeDataModule(relations, num_nodes, batch_size=ts.batch_size, num_negatives=ts.num_negatives,
                              negative_group_size=ts.negative_group_size, exclude="both", seed=ts.seed)

    def index(self, dataset: Dataset) -> None:
        from hyperrag.retrievers.hyperrag_update import dataset_questions, find_saved_ball, update_from

        t0 = time.perf_counter()
        self.dataset_name = dataset.name
        self.stream = None
        self.updated_passage_ids = set()
        if self.index_dir:
            self.open_index_dir(dataset, load=False)
        self.base_questions = dataset_questions(self, dataset)
        found = None if self.settings.retrain else find_saved_ball(self, dataset)
        refused = None
        min_reuse = self.settings.update.min_reuse
        if found is not None and found.kind != "exact" and found.reuse < min_reuse:
            refused = {"checkpoint": str(found.folder / "model.ckpt"), "reused_passages": found.reused,
                       "passages": found.total, "min_reuse": min_reuse}
            log.warning("hyperrag: the best saved ball %s covers only %d of %d passages (%.0f%% < min_reuse %.0f%%; "
                        "%d to delete, %d to insert): training from scratch instead", found.folder, found.reused,
                        found.total, 100 * found.reuse, 100 * refused["min_reuse"], len(found.deleted),
                        found.inserted)
            found = None
        if found is not None and (found.kind != "exact" or found.folder.name.startswith("gen-")):
            log.info("hyperrag: %s corpus match %s (%d of %d passages reused, %d deleted, %d inserted)", found.kind,
                     found.folder, found.reused, found.total, len(found.deleted), found.inserted)
            update_from(self, found, dataset)
            self._ready(False, t0)
            return
        prep = self.prepare(dataset)
        self.model, trained = self._load_or_train(prep["path"], prep["relations"], prep["init"])
        self.info = {"checkpoint": str(prep["path"]), "base_checkpoint": str(prep["path"]),
                     "loaded_from": "trained" if trained else "exact"}
        if refused is not None:
            self.info["update_refused"] = refused
        self._ready(trained, t0)

    def _ready(self, trained: bool, t0: float) -> None:
        """Model on the device in eval mode, ``info`` filled in, the streaming ball set up when enabled."""
        graph = self.graph
        forest = graph.forest(self.variant)
        s = self.settings
        relations = graph.relations(self.variant, s.query_closure_depth, s.query_edge_repeat)
        self.model.to(self.device)
        self.model.eval()
        self.info.update({"graph": self.variant, "trained_now": trained,
                          "explicit_edges": len(graph.explicit), "implicit_edges": len(graph.implicit),
                          "query_nodes": graph.num_queries, "relations": int(relations.shape[1]),
                          "forest": forest.stats(), **graph.stats,
                          "mean_distance_to_init": float(self._moved()),
                          "index_s": round(time.perf_counter() - t0, 2)})
        log.info("hyperrag index: %s", self.info)
        self.stream = None
        if s.streaming.enabled:
            from hyperrag.hyperbolic.streaming import StreamingBall

            stream = s.streaming
            self.stream = StreamingBall(self.model, graph, self.variant, self.builder,
                                        update_frequency=stream.update_frequency, epochs=stream.epochs,
                                        max_query_age=stream.max_query_age,
                                        max_query_nodes=stream.max_query_nodes,
                                        batch_size=s.train.batch_size, num_negatives=s.train.num_negatives,
                                        query_closure_depth=s.query_closure_depth)

    @torch.no_grad()
    def _moved(self) -> float:
        from hyperrag.hyperbolic.distance import poincare_distance

        m = self.model
        return float(poincare_distance(m.points, m.anchor, m.curvature).mean())

    def _load_or_train(self, path: Path, relations: torch.Tensor, init: torch.Tensor):  # type: ignore[no-untyped-def]
        import lightning as L

        from hyperrag.hyperbolic import PoincareEmbedding
        from hyperrag.retrievers.hyperrag_update import save_state

        if path.exists() and not self.settings.retrain:
            log.info("hyperrag: loading %s", path)
            model = PoincareEmbedding.load_from_checkpoint(str(path), map_location="cpu")
            if not (path.parent / "corpus.json").exists():  # written by older versions: add the update manifest
                self.model = model
                save_state(self, path.parent, self.base_questions, save_model=False)
            return model, False
        ts = self.settings.train
        model = self.new_model(init)
        if relations.shape[1] == 0:
            log.warning("hyperrag: no relations to train on (%s); the ball keeps its semantic initialisation",
                        self.variant)
        else:
            data = self.datamodule(relations, init.shape[0])
            trainer = L.Trainer(max_epochs=ts.max_epochs, accelerator="gpu" if self.device.startswith("cuda")
                                else "cpu", devices=1, logger=False, enable_checkpointing=False,
                                enable_model_summary=False, enable_progress_bar=True)
            trainer.fit(model, data)
        path.parent.mkdir(parents=True, exist_ok=True)
        model.cpu()
        # the layout LightningModule.load_from_checkpoint reads (also for a ball saved without any fit)
        torch.save({"state_dict": model.state_dict(), "hyper_parameters": dict(model.hparams),
                    "pytorch-lightning_version": L.__version__}, path)
        meta = {"graph": self.variant, "relations": int(relations.shape[1]), "train": as_dict(ts),
                "model": as_dict(self.settings.model)}
        (path.parent / "meta.json").write_text(json.dumps(meta, indent=1))
        self.model = model
        save_state(self, path.parent, self.base_questions, save_model=False)  # graph, keywords, corpus manifest
        log.info("hyperrag: trained ball saved to %s", path)
        return model, True

    # ---- corpus updates ----------------------------------------------------------------------------------
    def insert(self, passages: list[Any], epochs: int | None = None, refresh_queries: bool = True
               ) -> dict[str, Any]:
        """Append passages to the indexed corpus; only new + touched nodes train (``update_epochs``)."""
        from hyperrag.retrievers.hyperrag_update import insert_passages

        return insert_passages(self, passages, epochs, refresh_queries)

    def delete(self, passage_ids: list[str], epochs: int | None = None) -> dict[str, Any]:
        """Remove passages (by id) from the graph and the ball; orphaned query nodes are pruned."""
        from hyperrag.retrievers.hyperrag_update import delete_passages

        return delete_passages(self, passage_ids, epochs)

    def save_update(self) -> Path:
        """Save the updated ball next to the one it started from (``gen-N/model.ckpt``)."""
        from hyperrag.retrievers.hyperrag_update import save_generation

        return save_generation(self)

    # ---- retrieval ---------------------------------------------------------------------------------------
    @torch.no_grad()
    def query_points(self, query_emb: torch.Tensor, questions: list[str] | None = None) -> torch.Tensor:
        """Ball points of questions: the trained query node where the question is one (``query_position:
        trained``), else the sentence embedding mapped by the model's fitted Euclidean → ball map."""
        assert self.model is not None, "call index() first"
        q = self.model.embed(query_emb.to(self.device))
        if questions is not None and self.settings.query_position == "trained" and self.graph.num_queries:
            node = {t: self.graph.num_passages + i for i, t in enumerate(self.graph.questions)}
            rows = [(b, node[t]) for b, t in enumerate(questions) if t in node]
            if rows:
                b_idx = torch.tensor([b for b, _ in rows], device=q.device)
                n_idx = torch.tensor([n for _, n in rows], device=q.device)
                q[b_idx] = self.model.points[n_idx].to(q.dtype)
        return q

    @torch.no_grad()
    def distances(self, query_emb: torch.Tensor, k: int, questions: list[str] | None = None
                  ) -> tuple[torch.Tensor, torch.Tensor]:
        """Top-k passages by hyperbolic distance: [B, D_in] embeddings (and their question texts, to find the
        trained query nodes) → (indices [B, k], distances [B, k])."""
        from hyperrag.hyperbolic import topk_poincare

        q = self.query_points(query_emb, questions)
        points = self.model.points[: self.graph.num_passages]
        return topk_poincare(q, points, k, curvature=self.model.curvature)

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        q_emb = self.encoder.encode(questions, desc="queries")
        if self.stream is not None:
            self.stream.observe(questions, q_emb)
        if self.settings.multi_step and self.llm_available:
            return self._multi_step(questions, q_emb, top_k)
        idx, dist = self.distances(q_emb, top_k, questions)
        return RetrievalOutput(idx.cpu(), (-dist).cpu())

    def _multi_step(self, questions: list[str], q_emb: torch.Tensor, top_k: int) -> RetrievalOutput:
        from hyperrag.llm.tasks import get_task

        task = get_task("query_refinement", mode="decompose")
        results = self.llm.complete_structured_batch(task, [{"query": q} for q in questions],
                                                     progress="decomposition")
        pool = max(top_k, 50)
        out_idx, out_score, details = [], [], []
        for b, (question, res) in enumerate(zip(questions, results)):
            subs = [str(s) for s in (res.value or [])][: self.settings.max_sub_questions] if res.ok else []
            best: dict[int, float] = {}
            idx, dist = self.distances(q_emb[b: b + 1], pool, [question])
            for i, d in zip(idx[0].tolist(), dist[0].tolist()):
                best[i] = min(best.get(i, float("inf")), d)
            resolved: list[str] = []
            for sub in subs:  # sequential: "#j" → title of the best passage of sub-question j
                text = re.sub(r"#(\d+)", lambda m, done=resolved: self._title_of(done, int(m.group(1))), sub)
                i_s, d_s = self.distances(self.encoder.encode([text], desc="sub-questions"), pool)
                resolved.append(f"{text}\x00{i_s[0, 0].item()}")
                for i, d in zip(i_s[0].tolist(), d_s[0].tolist()):
                    best[i] = min(best.get(i, float("inf")), d)
            ranked = sorted(best.items(), key=lambda t: (t[1], t[0]))[:top_k]
            out_idx.append([i for i, _ in ranked])
            out_score.append([-d for _, d in ranked])
            details.append({"sub_questions": [r.split("\x00")[0] for r in resolved]})
        return RetrievalOutput(torch.tensor(out_idx, dtype=torch.long), torch.tensor(out_score), details)

    def _title_of(self, resolved: list[str], j: int) -> str:
        if 1 <= j <= len(resolved):
            return self.titles[int(resolved[j - 1].split("\x00")[1])]
        return ""

    def describe(self) -> dict[str, Any]:
        out = {"method": self.name, **self.info}
        if self.index_dir:
            out["index_dir"] = self.index_dir
        if self.stream is not None:
            out["streaming_updates"] = len(self.stream.updates)
        return out
