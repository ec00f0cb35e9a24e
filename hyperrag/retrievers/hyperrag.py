"""HyperRAG (query-centric graphs embedded in a Poincaré ball), read as the paper's Algorithm 1.

Index (:meth:`HyperRAGRetriever.index`) — the graph ``G`` and its ball, :class:`~hyperrag.hyperbolic.ball_index.BallIndex`:

1. §3.1.1 explicit edges: YAKE keyword sets, ``|Ki ∩ Kj| / min(|Ki|, |Kj|) ≥ θ``, ≤ 3 neighbours per passage;
2. §3.1.2 implicit edges, Algorithm 1 lines 1–8 for every question of the query file (``implicit_queries:
   query_file``; question text only): dense candidates → ``SelectRelevant`` → ``BuildEdges`` (typed relations in
   answering the question) → ``NeedMoreContext`` (missing concepts → follow-up questions as new queries), with
   the LLM, or the counted LLM-free stand-in (``llm_steps_skipped``);
3. §3.1.3 fusion: the query trees (relation chains first), then passages sharing a key entity, then the keyword
   forest, merged into one forest on shared nodes;
4. §3.2 the ball: every node starts at its sentence embedding projected into the Poincaré ball; the forest's
   edges (and each question's descendants, ``query_closure_depth``) are pulled together by the Nickel & Kiela
   loss (negatives keep it from collapsing, unlike the paper's plain ``Σ d`` — kept as ``loss: edge_distance``)
   plus an anchor to the semantic start, trained with ``lightning.Trainer.fit`` + geoopt's Riemannian Adam —
   the path of ``train.py task=poincare`` — and saved under ``<models_dir>/hyperrag/<data>-<graph>-<key>/``
   (key: corpus, settings, questions and the LLM that built the query graphs). A saved ball whose corpus is
   the dataset's up to deleted and appended passages is loaded and updated instead
   (:mod:`hyperrag.retrievers.hyperrag_update`).

The query graph (``query_graph``): ``passages`` — the paper's (§2: nodes are passages, edges passage–passage;
fused with key-entity merges) — or the labelled ``question_root`` variant (each question a node tied to its
passages and, ``query_closure_depth``, their children).

The protocol (``protocol``; ``metrics.json`` ``protocol``):

* ``transductive`` — the query graphs of the query file's questions are built into the ball at index time
  (step 2 above), so a question is ranked by a ball that holds every scored question's graph;
* ``streaming`` (Algorithm 1, lines 1–14 per question) — the index holds no question's graph (the ball is trained
  on the query-independent keyword forest). The questions arrive one at a time, in order: each one's query graph
  is built from its text alone (the LLM or the counted stand-in; ``llm=oracle``: gold selection, an upper bound),
  fused into ``G``, the new and touched nodes trained (``streaming.epochs``; the rest frozen), then the question
  is ranked. Each prediction also keeps the no-ball rows (``details["no_ball"]``: dense, dense with the same
  feedback rounds, the query graph's passages by selection order and by dense score) —
  ``python -m hyperrag.retrievers.hyperrag_rows RUN_DIR`` scores them beside the ball with intervals.

Ranking a question (:meth:`HyperRAGRetriever.retrieve`):

* single step (§3.2) — the question's sentence embedding projected into the ball by the same map as the passages
  (``query_position: projected``, the paper's rule) or, transductively, its own trained query node
  (``query_position: trained``, question-root only); the top-k passages by hyperbolic distance, score
  ``-distance``;
* multi-step (§4.2, ``multi_step: true`` with an LLM) — with ``route_simple`` the LLM first says whether the question
  is single-hop (answered in a single step, by the run's reader) or multi-hop with its sub-questions
  (``question_routing``); without it every question is decomposed (``query_refinement/decompose``). Each
  sub-question is retrieved in order (``#j`` replaced by the intermediate answer of sub-question ``j``) and
  answered by the reader (``grounded_answer``) from its top ``reader_passages`` passages; the final answer is
  synthesised from the intermediate answers and the merged evidence (``details["answer"]``, in the run's
  ``answer_style``); the ranking interleaves the sub-questions' rankings (round robin), then the question's.
  Without an LLM: single step, counted as ``llm_steps_skipped.multi_step``.

Corpus updates: :meth:`HyperRAGRetriever.insert` / :meth:`~HyperRAGRetriever.delete` (only new and touched nodes
train, the rest stay bit-identical) and :meth:`~HyperRAGRetriever.save_update` (``gen-N/``). Index directories
(``retrieve.py method=hyperrag index_dir=DIR``): the dataset is the index's passages in index order; the ball
follows ``python -m hyperrag.index build / insert / delete`` through the update path.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset, Passage
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs
from hyperrag.retrievers.settings import HyperRAGSettings
from hyperrag.utils.hashing import stable_digest

log = logging.getLogger(__name__)

_HOP_REF = re.compile(r"#(\d+)")


class HyperRAGRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.HyperRAGSettings` — the graph variant (``graph``), the
            query graph's form and the protocol (``query_graph``, ``protocol``), the passage graph (``keywords``,
            ``explicit``, ``key_entity``, ``implicit``, ``implicit_queries``, ``fusion``), the training relations
            (``query_closure_depth``, ``query_edge_repeat``), the ball and its training (``model``, ``train``),
            ranking (``query_position``, ``multi_step``, ``route_simple``, ``max_sub_questions``,
            ``reader_passages``, ``answer_style``), ``streaming``, corpus updates (``update_epochs``, ``update``),
            ``models_dir``, ``index_root``, ``retrain``.
        encoder: sentence embedder (passages, questions, new queries of later rounds, sub-questions).
        llm: the framework's LLM (query graphs, decomposition, intermediate and final answers); ``None`` /
            ``NoLLM``: the counted stand-ins and single-step retrieval.
        device: ``auto`` / ``cpu`` / ``cuda`` for the ball and the top-k.
        index_dir: retrieve over this knowledge-graph index directory's passages (the dataset must list them in
            index order, as ``retrieve.py index_dir=DIR`` does); the ball follows the index's inserts/deletes.
    """

    name = "hyperrag"
    supports_index_dir = True
    settings: HyperRAGSettings

    def __init__(self, settings: HyperRAGSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        if settings.query_position == "trained" and settings.query_graph == "passages":
            from hyperrag.errors import InputError

            raise InputError("query_position=trained reads a question's own node; the paper's query graph "
                             "(query_graph=passages) has none — use query_graph=question_root or the paper's "
                             "projected rule", setting="method.retriever.query_position")
        self.ball: Any = None  # hyperrag.hyperbolic.ball_index.BallIndex
        self.stream: Any = None  # hyperrag.hyperbolic.streaming.StreamingBall
        self.info: dict[str, Any] = {}
        self.updated_passage_ids: set[str] = set()
        #: streaming: each arrived question's query graph (for its no-ball rows)
        self.query_graphs: dict[str, Any] = {}

    # ---- views of the ball -------------------------------------------------------------------------------
    @property
    def variant(self) -> str:
        """The forest the ball is trained on: ``explicit`` | ``implicit`` | ``fused``."""
        return self.settings.graph

    @property
    def model(self) -> Any:
        return self.ball.model if self.ball is not None else None

    @property
    def graph(self) -> Any:
        return self.ball.graph if self.ball is not None else None

    @property
    def passage_ids(self) -> list[str]:
        return self.ball.table.ids

    @property
    def streaming(self) -> bool:
        """``protocol: streaming`` with query graphs (a ball of the explicit forest has none to stream)."""
        return self.settings.protocol == "streaming" and self.settings.graph != "explicit"

    @property
    def transductive(self) -> bool:
        """The ball holds, at index time, the query graphs of the questions it is scored on (the query file's):
        true for the implicit and fused graphs under ``protocol: transductive``; ``query_position: trained``
        reads those questions' own trained nodes besides. Streaming is not: a question's graph joins when it
        arrives, and no later question's is in the ball before then."""
        from hyperrag.retrievers.hyperrag_update import dataset_question_graphs

        by_design = dataset_question_graphs(self.settings)
        return by_design or self.saw_questions  # saw_questions: an artifact in use trained on them (the runner)

    @property
    def protocol(self) -> str | None:
        """``streaming`` | ``transductive`` (the ball held the scored questions' graphs) | ``None`` (no query
        graphs: the explicit forest)."""
        if self.streaming:
            return "streaming"
        return "transductive" if self.transductive else None

    def ball_folder(self, dataset: Dataset, questions: list[str]) -> Path:
        """``<models_dir>/hyperrag/<data>-<graph>-<key>``: key = corpus, settings (LLM included), questions."""
        from hyperrag.hyperbolic.ball_index import questions_key
        from hyperrag.index.kg_index import corpus_fingerprint
        from hyperrag.retrievers.hyperrag_update import settings_key

        key = stable_digest(corpus_fingerprint(dataset), settings_key(self.settings, self.encoder, self.llm),
                            questions_key(questions), length=10)
        return Path(self.settings.models_dir) / "hyperrag" / f"{dataset.name}-{self.variant}-{key}"

    # ---- index: G and its ball ---------------------------------------------------------------------------
    def build(self, dataset: Dataset) -> Any:
        """The untrained ball index of ``dataset`` (Algorithm 1, lines 1–8, for the query file's questions)."""
        from hyperrag.hyperbolic.ball_index import BallIndex
        from hyperrag.retrievers.hyperrag_update import dataset_questions, settings_key

        ball = BallIndex.build(dataset.corpus.passages, dataset_questions(self.settings, dataset), self.settings,
                               self.encoder, self.llm, self.device)
        ball.settings_key = settings_key(self.settings, self.encoder, self.llm)
        return ball

    def index(self, dataset: Dataset) -> None:
        from hyperrag.hyperbolic.ball_index import questions_key
        from hyperrag.retrievers.hyperrag_update import (
            dataset_questions,
            find_saved_ball,
            settings_key,
            update_from,
        )

        t0 = time.perf_counter()
        s = self.settings
        self.stream, self.updated_passage_ids = None, set()
        if self.index_dir:
            self.open_index_dir(dataset, load=False)
        questions = dataset_questions(s, dataset)
        skey = settings_key(s, self.encoder, self.llm)
        root = Path(s.models_dir) / "hyperrag"
        found = None if s.retrain else find_saved_ball(root, dataset, self.variant, skey, questions_key(questions))
        refused = None
        if found is not None and found.kind != "exact" and found.reuse < s.update.min_reuse:
            refused = {"checkpoint": str(found.folder / "model.ckpt"), "reused_passages": found.reused,
                       "passages": found.total, "min_reuse": s.update.min_reuse}
            log.warning("hyperrag: the best saved ball %s covers only %d of %d passages (%.0f%% < min_reuse %.0f%%; "
                        "%d to delete, %d to insert): training from scratch instead", found.folder, found.reused,
                        found.total, 100 * found.reuse, 100 * s.update.min_reuse, len(found.deleted), found.inserted)
            found = None
        trained = False
        if found is not None:
            self.ball, self.info = update_from(found, dataset, s, self.encoder, self.llm, self.device, skey)
            for op in self.info["updates"]:
                for stats in op.values():
                    self.updated_passage_ids.update(stats.pop("trained_passages", []))
                    stats.pop("pruned_questions", None)
        else:
            self.ball = self.build(dataset)
            folder = self.ball_folder(dataset, questions)
            fit = self.ball.train(folder)
            trained = True
            self.info = {"checkpoint": str(folder / "model.ckpt"), "base_checkpoint": str(folder / "model.ckpt"),
                         "loaded_from": "trained", "fit_s": round(fit.seconds, 2),
                         "fit_steps": int(getattr(fit.trainer, "global_step", 0))}
            if fit.start_epoch or fit.start_step:  # an interrupted fit of this ball was resumed
                self.info.update(resumed_at_epoch=fit.start_epoch, resumed_at_step=fit.start_step)
            if refused is not None:
                self.info["update_refused"] = refused
        self.skipped.update(self.ball.skipped)
        self._ready(trained, t0)

    def _ready(self, trained: bool, t0: float) -> None:
        """The ball on the device in eval mode, ``info`` filled in, the streaming ball set up when enabled."""
        ball, s = self.ball, self.settings
        ball.model.to(self.device).eval()
        graph = ball.graph
        forest = graph.forest(self.variant)
        self.info.update({"graph": self.variant, "trained_now": trained, "query_position": s.query_position,
                          "transductive": self.transductive, "explicit_edges": len(graph.explicit),
                          "entity_edges": len(graph.entity), "implicit_edges": len(graph.implicit),
                          "implicit_by_relation": graph.implicit.count_by_relation(),
                          "forest_by_relation": forest.edges.count_by_relation(),
                          "query_nodes": graph.num_queries, "relations": int(ball.relations().shape[1]),
                          "forest": forest.stats(), **graph.stats,
                          "mean_distance_to_init": round(ball.mean_distance_moved(), 5),
                          "index_s": round(time.perf_counter() - t0, 2)})
        self.info.update({"query_graph": s.query_graph, "protocol": self.protocol, "rank_scope": s.rank_scope,
                          "key_entity_fusion": s.key_entity.fusion, "loss": s.model.loss,
                          "optimizer": s.model.optimizer, "lr": s.model.lr, "batch_size": s.train.batch_size,
                          "init_radius": s.model.init_radius})
        log.info("hyperrag index: %s", self.info)
        self.stream, self.query_graphs = None, {}
        if self.streaming:
            from hyperrag.hyperbolic.streaming import StreamingBall

            st = s.streaming
            self.stream = StreamingBall(ball, update_frequency=st.update_frequency, epochs=st.epochs,
                                        max_query_age=st.max_query_age, max_query_nodes=st.max_query_nodes,
                                        batch_size=st.batch_size)

    # ---- corpus updates ----------------------------------------------------------------------------------
    def insert(self, passages: list[Passage], epochs: int | None = None, refresh_queries: bool = True
               ) -> dict[str, Any]:
        """Append passages to the indexed corpus; only new + touched nodes train (``update_epochs``)."""
        assert self.ball is not None, "call index() first"
        before = Counter(self.ball.skipped)
        self.ball.index_graphs = {}  # the index-time graphs no longer describe the updated ball: no rows after it
        out = self.ball.insert(passages, self.settings.update_epochs if epochs is None else epochs, refresh_queries)
        return self._updated("insert", out, before)

    def delete(self, passage_ids: list[str], epochs: int | None = None) -> dict[str, Any]:
        """Remove passages (by id) from the graph and the ball; orphaned query nodes are pruned."""
        assert self.ball is not None, "call index() first"
        before = Counter(self.ball.skipped)
        self.ball.index_graphs = {}  # passage positions change: the index-time graphs no longer apply
        out = self.ball.delete(passage_ids, self.settings.update_epochs if epochs is None else epochs)
        if self.stream is not None:
            self.stream.forget(out["pruned_questions"])
        return self._updated("delete", out, before)

    def _updated(self, op: str, out: dict[str, Any], skipped_before: Counter) -> dict[str, Any]:
        self.updated_passage_ids.update(out.pop("trained_passages", []))
        out.pop("pruned_questions", None)
        self.info.setdefault("updates", []).append({op: out})
        self.info["query_nodes"] = self.ball.graph.num_queries
        self.skipped.update(self.ball.skipped - skipped_before)  # query graphs the update rebuilt
        log.info("hyperrag %s: %s", op, out)
        return out

    def save_update(self) -> Path:
        """Save the updated ball next to the one it started from (``gen-N/model.ckpt``)."""
        from hyperrag.retrievers.hyperrag_update import save_generation

        path = save_generation(self.ball, Path(self.info["base_checkpoint"]).parent)
        self.info["checkpoint"] = str(path)
        return path

    # ---- retrieval ---------------------------------------------------------------------------------------
    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        assert self.ball is not None, "call index() first"
        q_emb = self.encoder.encode(questions, desc="queries")
        if self.stream is not None:
            return self._streaming(questions, q_emb, top_k)
        out = self._rank(questions, q_emb, top_k)
        graphs = self.ball.index_graphs
        if not graphs:
            return out
        # transductive, a ball built now: the same rows as a streaming run (the query graph as built at index time)
        details = list(out.details) if out.details else [{} for _ in questions]
        for b, q in enumerate(questions):
            graph = graphs.get(q)
            if graph is not None:
                details[b] = {**details[b], "no_ball": self.no_ball_rows(q_emb[b], graph, top_k),
                              "ball_rows": self.ball_rows(q_emb[b:b + 1], q, graph, top_k)}
        return RetrievalOutput(out.indices, out.scores, details)

    def scopes(self, questions: list[str]) -> list[list[int]] | None:
        """``V_i`` of each question under ``rank_scope: query_graph`` (``None`` under ``corpus``): the passages its
        own query graph selected, in every round (``QueryGraph.passages``; under the question-root variant, the
        passages its query node reaches). Passages that joined only through fusion (the other members of a merged
        key-entity node, keyword neighbours) are in ``G``, not in ``V_i``. A multi-step question's sub-questions
        rank within their question's ``V_i`` first. A question whose graph is unknown here (the paper's graph
        under ``protocol: transductive`` keeps no per-question record) ranks the corpus, counted as
        ``rank_scope_no_graph``."""
        if self.settings.rank_scope == "corpus":
            return None
        by_node: dict[str, set[int]] = {}
        if self.ball.query_nodes and self.graph.num_queries:
            p = self.graph.num_passages
            by_node = {q: {x for x in reach if x < p}
                       for q, reach in zip(self.graph.questions, self.graph.query_passages())}
        out = []
        for q in questions:
            graph = self.query_graphs.get(q)
            if graph is not None:
                out.append(list(dict.fromkeys(graph.passages)))
            elif q in by_node:
                out.append(sorted(by_node[q]))
            else:
                self.skip("rank_scope_no_graph")
                out.append([])
        return out

    def _rank(self, questions: list[str], q_emb: torch.Tensor, top_k: int) -> RetrievalOutput:
        """Rank with the ball as it is: multi-step with an LLM (``multi_step``), else the single step — over the
        whole corpus, or ``V_i`` first (``rank_scope``)."""
        if self.settings.multi_step:
            if self.llm_available:
                return self._multi_step(questions, q_emb, top_k)
            self.skip("multi_step", len(questions))  # no LLM: single step, and said so
        idx, dist = self.ball.topk(self.ball.points(q_emb, questions, self.settings.query_position), top_k,
                                   self.scopes(questions))
        return RetrievalOutput(idx.cpu(), (-dist).cpu())

    def _streaming(self, questions: list[str], q_emb: torch.Tensor, top_k: int) -> RetrievalOutput:
        """Algorithm 1 per question, in arrival order (``streaming.order``: file order or a seeded permutation; the
        output keeps file order, each row's ``arrival`` its position in the stream): its query graph joins and
        trains, then it is ranked."""
        st = self.settings.streaming
        arrival = list(range(len(questions)))
        if st.order == "shuffled":
            gen = torch.Generator().manual_seed(st.order_seed)
            arrival = torch.randperm(len(questions), generator=gen).tolist()
        rows: dict[int, tuple[torch.Tensor, torch.Tensor, dict[str, Any]]] = {}
        for pos, b in enumerate(arrival):
            q = questions[b]
            before = Counter(self.ball.skipped)
            graph = self.stream.arrive(q, q_emb[b:b + 1])
            self.skipped.update(self.ball.skipped - before)
            if graph is not None:
                self.query_graphs[q] = graph
            out = self._rank([q], q_emb[b:b + 1], top_k)
            det = dict(out.details[0]) if out.details else {}
            graph = self.query_graphs.get(q)
            if graph is not None:
                det["query_graph"] = {"rounds": [[self.ball.table.ids[p] for p in r] for r in graph.selected],
                                      "queries": graph.queries, "llm": graph.llm}
                det["no_ball"] = self.no_ball_rows(q_emb[b], graph, top_k)
                det["ball_rows"] = self.ball_rows(q_emb[b:b + 1], q, graph, top_k)
            if st.order != "file":
                det["arrival"] = pos
            rows[b] = (out.indices[0], out.scores[0], det)
        idx, scores, details = zip(*(rows[b] for b in range(len(questions))))
        return RetrievalOutput(torch.stack(list(idx)), torch.stack(list(scores)), list(details))

    def ball_rows(self, q_emb: torch.Tensor, question: str, graph: Any, top_k: int) -> dict[str, list[str]]:
        """The ball's single-step rankings of the same question under both scopes, trained and untrained (passage
        ids, ``top_k`` long): ``trained_corpus``, ``trained_query_graph`` (``V_i`` = the graph's passages first),
        ``untrained_corpus``, ``untrained_query_graph`` — untrained: the projected starting points
        (``model.anchor``, epoch 0) and the projected question. The trained rows place the question as the run
        does (``query_position``), so ``trained_*`` is the run's own single-step ranking. Trained − untrained on
        the same candidates is what training adds.

        Args:
            q_emb: FloatTensor [1, D] the question's sentence embedding.
            question: its text (``query_position: trained`` reads its node).
            graph: its :class:`~hyperrag.passage_graph.QueryGraph`.
        """
        points = {True: self.ball.points(q_emb, [question], self.settings.query_position),
                  False: self.ball.points(q_emb)}
        scope = [list(dict.fromkeys(graph.passages))]
        ids = self.ball.table.ids
        out = {}
        for trained in (True, False):
            for name, sc in (("corpus", None), ("query_graph", scope)):
                idx, _ = self.ball.topk(points[trained], top_k, sc, untrained=not trained)
                out[f"{'trained' if trained else 'untrained'}_{name}"] = [ids[i] for i in idx[0].tolist()]
        return out

    def multi_rows(self, q_emb: torch.Tensor, question: str, hop_emb: torch.Tensor, graph: Any, top_k: int
                   ) -> dict[str, list[str]]:
        """A multi-step question's rankings by every row, on the run's own sub-question texts (resolved with its
        intermediate answers), merged as the run merges them (each hop's ``max(top_k, reader_passages)`` best,
        then the question's, round robin): the ball trained and untrained (``model.anchor``, epoch 0) under both
        scopes (``trained_corpus`` / ``trained_query_graph`` / ``untrained_*``; the run's own ranking is
        ``trained_<rank_scope>``), and without the ball ``dense`` (each hop and the question by cosine) and
        ``graph_dense`` — the *matched* row: each hop and the question rank ``V_i`` by cosine first, then the
        rest by cosine; fed what the ball is fed (the question, its sub-questions and ``V_i``).

        The untrained rows reuse the trained run's sub-question texts; a run with ``train.max_epochs=0`` is the
        untrained arm whose intermediate answers come from its own rankings.

        Args:
            q_emb: FloatTensor [1, D] the question's sentence embedding.
            question: its text.
            hop_emb: FloatTensor [H, D] the resolved sub-questions' sentence embeddings, in order.
            graph: its :class:`~hyperrag.passage_graph.QueryGraph`.
        """
        ball, ids = self.ball, self.ball.table.ids
        pool = max(top_k, self.settings.reader_passages)
        v_i = list(dict.fromkeys(graph.passages))
        hops = hop_emb.shape[0]
        q_pts = {True: ball.points(q_emb, [question], self.settings.query_position), False: ball.points(q_emb)}
        h_pts = ball.points(hop_emb) if hops else None
        out: dict[str, list[str]] = {}
        for trained in (True, False):
            for name, scope in (("corpus", None), ("query_graph", v_i)):
                hop_idx = ball.topk(h_pts, pool, None if scope is None else [scope] * hops,
                                    untrained=not trained)[0].tolist() if hops else []
                own, _ = ball.topk(q_pts[trained], pool, None if scope is None else [scope],
                                   untrained=not trained)
                merged = _interleave([*hop_idx, own[0].tolist()], top_k)
                out[f"{'trained' if trained else 'untrained'}_{name}"] = [ids[i] for i in merged]
        emb = ball.table.embeddings
        cos = emb @ torch.cat([hop_emb.to(emb), q_emb.to(emb)]).float().T  # [P, H + 1]: the hops, then the question
        for name, first in (("dense", []), ("graph_dense", v_i)):
            lists = []
            for h in range(hops + 1):
                dense = torch.argsort(-cos[:, h], stable=True).tolist()
                lists.append(list(dict.fromkeys(sorted(first, key=lambda p, h=h: -float(cos[p, h])) + dense))[:pool])
            out[name] = [ids[i] for i in _interleave(lists, top_k)]
        return out

    def no_ball_rows(self, q_emb: torch.Tensor, graph: Any, top_k: int) -> dict[str, list[str]]:
        """What the ball adds, measured on the same question: rankings (passage ids, ``top_k`` long) without it.

        * ``dense`` — cosine of the sentence embeddings;
        * ``dense_feedback`` — dense with the same feedback rounds: each passage scored by its best cosine over the
          question and the query graph's later-round queries (the LLM's follow-up questions, or the stand-in's
          pseudo-relevance-feedback query);
        * ``graph_selection`` — the query graph's passages in the order they were selected (round by round), then
          dense;
        * ``graph_dense`` — the query graph's passages by cosine to the question, then dense;
        * ``graph_feedback`` — the query graph's passages by their best cosine over the question and its feedback
          queries, then the rest by the same score.
        """
        table = self.ball.table
        emb = table.embeddings
        cos = emb @ q_emb.to(emb).float()
        dense = torch.argsort(-cos, stable=True).tolist()
        follow = [x for r in graph.queries for x in r]
        fb = cos
        if follow:
            f_emb = self.encoder.encode(follow, desc="feedback queries").to(emb).float()
            fb = torch.maximum(cos, (emb @ f_emb.T).max(1).values)
        chosen = list(dict.fromkeys(graph.passages))
        by_cos = sorted(chosen, key=lambda p: -float(cos[p]))
        by_fb = sorted(chosen, key=lambda p: -float(fb[p]))
        fb_order = torch.argsort(-fb, stable=True).tolist()

        def ids(order: list[int]) -> list[str]:
            return [table.ids[p] for p in list(dict.fromkeys(order + dense))[:top_k]]

        return {"dense": ids(dense), "dense_feedback": ids(fb_order),
                "graph_selection": ids(chosen), "graph_dense": ids(by_cos),
                "graph_feedback": [table.ids[p] for p in list(dict.fromkeys(by_fb + fb_order))[:top_k]]}

    def _answer(self, questions: list[str], ranked: list[list[int]], step: str,
                notes: list[str] | None = None, style: str = "short") -> list[dict[str, Any] | None]:
        """The reader (``grounded_answer`` in ``style``) on each question's top ``reader_passages`` passages (and
        an optional note shown first); ``None`` where the call failed (counted as ``step``)."""
        from hyperrag.llm.tasks import get_task

        n = self.settings.reader_passages
        table = self.ball.table
        inputs = []
        for b, (q, rows) in enumerate(zip(questions, ranked)):
            shown = [(table.ids[i], table.texts[i]) for i in rows[:n]]
            if notes is not None and notes[b]:
                shown.insert(0, ("", notes[b]))
            inputs.append({"question": q, "passages": shown})
        results = self.llm.complete_structured_batch(get_task("grounded_answer", style=style), inputs,
                                                     progress=step.replace("_", " "))
        out: list[dict[str, Any] | None] = []
        for res in results:
            if res.ok:
                got = {"answer": res.value["answer"], "supporting_ids": [s for s in res.value["supporting"] if s]}
                if "short_answer" in res.value:
                    got["short_answer"] = res.value["short_answer"]
                out.append(got)
            else:
                self.skip(step)
                out.append(None)
        return out

    def _multi_step(self, questions: list[str], q_emb: torch.Tensor, top_k: int) -> RetrievalOutput:
        """(Route →) decompose → retrieve and answer each sub-question in order → synthesise (see the module
        docstring). A question routed to a single step keeps its single-step ranking and no answer of its own
        (the run's reader answers it from its top passages)."""
        from hyperrag.llm.tasks import get_task

        s, ball = self.settings, self.ball
        pool = max(top_k, s.reader_passages)
        if s.route_simple:
            task, step = get_task("question_routing"), "question_routing"
        else:
            task, step = get_task("query_refinement", mode="decompose"), "decomposition"
        results = self.llm.complete_structured_batch(task, [{"query": q} for q in questions],
                                                     progress=step.replace("_", " "))
        subs = [[str(x) for x in (r.value or [])][: s.max_sub_questions] if r.ok else [] for r in results]
        self.skip(step, sum(not r.ok for r in results))
        single = [s.route_simple and r.ok and not x for r, x in zip(results, subs)]  # routed to one step
        scopes = self.scopes(questions)
        own, own_dist = ball.topk(ball.points(q_emb, questions, s.query_position), pool, scopes)
        rankings: list[list[list[int]]] = [[] for _ in questions]
        answers: list[list[str]] = [[] for _ in questions]
        resolved: list[list[str]] = [[] for _ in questions]
        hop_emb: list[list[torch.Tensor]] = [[] for _ in questions]
        for j in range(max((len(x) for x in subs), default=0)):  # sequential: hop j may name #1..#j-1
            rows = [b for b, x in enumerate(subs) if j < len(x)]
            texts = [_HOP_REF.sub(lambda m, b=b: _earlier(answers[b], int(m.group(1))), subs[b][j]) for b in rows]
            emb = self.encoder.encode(texts, desc="sub-questions")
            idx, _ = ball.topk(ball.points(emb), pool, None if scopes is None else [scopes[b] for b in rows])
            ranked = idx.tolist()
            for i, (b, text, r) in enumerate(zip(rows, texts, ranked)):
                resolved[b].append(text)
                rankings[b].append(r)
                hop_emb[b].append(emb[i])
            for b, got, r in zip(rows, self._answer(texts, ranked, "intermediate_answer"), ranked):
                # a failed intermediate answer leaves the best passage's title to fill "#j" later
                answers[b].append(got["answer"] if got else ball.table.label(r[0]))
        out_idx, out_score, details = [], [], []
        for b in range(len(questions)):
            if single[b]:  # routed: the single-step ranking, by hyperbolic distance
                out_idx.append(own[b, :top_k].tolist())
                out_score.append((-own_dist[b, :top_k]).tolist())
                details.append({"route": "single_step"})
                continue
            merged = _interleave(rankings[b] + [own[b].tolist()], top_k)
            out_idx.append(merged)
            out_score.append([-float(r) for r in range(len(merged))])  # rank order: 0, -1, -2, ...
            details.append({"sub_questions": resolved[b], "intermediate_answers": answers[b],
                            **({"route": "multi_step"} if s.route_simple else {})})
            graph = self.query_graphs.get(questions[b]) or ball.index_graphs.get(questions[b])
            if graph is not None:  # the same sub-questions ranked by every row (hyperrag_rows)
                details[-1]["multi_rows"] = self.multi_rows(q_emb[b:b + 1], questions[b],
                                                            _stack(hop_emb[b], q_emb), graph, top_k)
        multi = [b for b in range(len(questions)) if not single[b]]
        notes = ["; ".join(f"{q} → {a}" for q, a in zip(resolved[b], answers[b])) for b in multi]
        notes = [f"Answers found for the sub-questions: {n}." if n else "" for n in notes]
        finals = self._answer([questions[b] for b in multi], [out_idx[b] for b in multi], "final_answer", notes,
                              style=s.answer_style) if multi else []
        for b, got in zip(multi, finals):
            if got is not None:
                details[b].update(got)  # answer, supporting_ids (and short_answer)
        return RetrievalOutput(torch.tensor(out_idx, dtype=torch.long), torch.tensor(out_score), details)

    def describe(self) -> dict[str, Any]:
        out = {"method": self.name, **self.info}
        if self.index_dir:
            out["index_dir"] = self.index_dir
        if self.stream is not None:
            ups = self.stream.updates
            trained = [u for u in ups if "steps" in u]
            out["streaming"] = {"arrived": len(self.stream.arrived), "updates": len(ups),
                                "trained_nodes": sum(u.get("trained_nodes", 0) for u in ups),
                                "train_s": round(sum(u.get("train_s", 0.0) for u in ups), 2),
                                "epochs_per_update": self.stream.epochs,
                                "batch_size": self.settings.streaming.batch_size or self.settings.train.batch_size,
                                "steps": sum(u["steps"] for u in trained),
                                "mean_steps_per_update": round(sum(u["steps"] for u in trained)
                                                               / max(len(trained), 1), 3),
                                "mean_relations_per_update": round(sum(u["relations"] for u in trained)
                                                                   / max(len(trained), 1), 2),
                                # mean over updates of the trained nodes' mean hyperbolic movement in that update
                                "mean_moved_per_update": round(sum(u["moved"] for u in trained)
                                                               / max(len(trained), 1), 5),
                                "mean_distance_to_init": round(self.ball.mean_distance_moved(), 5)}
            out["query_graphs"] = self.ball.graph.stats
            out["merged_nodes"] = merged_node_sizes(self.ball.graph.forest(self.variant))
        return out


def merged_node_sizes(forest: Any) -> dict[str, Any]:
    """Sizes of the forest's merged key-entity nodes (members per representative): count, mean, max, histogram."""
    sizes = sorted((Counter(forest.merged.child.tolist()) + Counter()).values()) if len(forest.merged) else []
    sizes = [n + 1 for n in sizes]  # the representative itself
    return {"count": len(sizes), "passages": sum(sizes), "mean_size": round(sum(sizes) / max(len(sizes), 1), 2),
            "max_size": max(sizes, default=0), "by_size": {str(k): v for k, v in sorted(Counter(sizes).items())}}


def _stack(rows: list[torch.Tensor], like: torch.Tensor) -> torch.Tensor:
    """[H, D] the rows stacked; [0, D] when there are none (a question whose decomposition failed)."""
    return torch.stack(rows) if rows else like.new_zeros(0, like.shape[-1])


def _earlier(answers: list[str], j: int) -> str:
    """The intermediate answer of sub-question ``j`` (1-based), or ``#j`` left as is when there is none."""
    return answers[j - 1] if 1 <= j <= len(answers) else f"#{j}"


def _interleave(rankings: list[list[int]], k: int) -> list[int]:
    """Round robin over rankings (first of each, then second of each, ...), without repeats, ``k`` long."""
    out: list[int] = []
    seen: set[int] = set()
    depth = max((len(r) for r in rankings), default=0)
    for d in range(depth):
        for r in rankings:
            if d < len(r) and r[d] not in seen:
                seen.add(r[d])
                out.append(r[d])
                if len(out) == k:
                    return out
    return out
