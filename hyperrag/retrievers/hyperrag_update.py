"""Incremental corpus updates of an indexed :class:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever`.

:func:`insert_passages` — new passages (appended after the current ones; query node ids shift):

  1. sentence embeddings (encoder cache) and YAKE keyword sets (cached, keyed by the new texts only);
  2. explicit edges of the new passages only, through the inverted index against the whole grown corpus
     (:func:`~hyperrag.passage_graph.keyword_edges_incremental`; degree caps of old passages respected);
  3. the current forest is pinned (:meth:`~hyperrag.passage_graph.PassageGraph.pin`): every trained forest
     edge stays, new edges join where they give no node a second parent and close no cycle;
  4. new nodes start at the model's fitted Euclidean → ball projection (the map that initialised the ball);
  5. only new and touched nodes (endpoints of new edges) train, with every other row frozen by the gradient
     mask (:class:`~hyperrag.hyperbolic.streaming.StreamingBall`): untouched rows stay bit-identical.

:func:`delete_passages` — passages leave the ball (``remap_nodes``) with every edge touching them; their forest
children become roots of the pinned forest and are re-attached through remaining (unpinned) edges where those
fit (re-attached children train, frozen otherwise); query nodes whose query graph held only deleted passages
are pruned.

Persistence: every ball saved by the retriever carries ``corpus.json`` (per-passage content hashes, a digest of
every setting, the query-node questions), ``graph.json`` (the passage graph, pinned forest included) and
``keywords.json``. :func:`save_generation` writes an updated ball to ``<base folder>/gen-N/``.
:func:`find_saved_ball` is what ``HyperRAGRetriever.index`` runs first. A saved ball (same settings and
questions) is reusable when the dataset's corpus is the ball's corpus with some passages removed (order
preserved) and others appended — matched by :func:`passage_hash`, which is how an index directory changes under
``python -m hyperrag.index insert|delete``:

  * ``exact`` — same corpus: loaded;
  * ``prefix`` — the ball's corpus is a strict prefix: loaded, the rest inserted;
  * ``updated`` — some of the ball's passages are gone: loaded, those deleted, the rest inserted.

The candidate reusing the most passages wins (ties: fewer deletions, then the newest); an update is saved as
the next generation (:func:`update_from`). Unless at least ``update.min_reuse`` of the final corpus keeps its
trained row, the retriever trains from scratch instead (an update of a mostly new corpus would be a ball whose
forest was chosen for passages that are gone). ``retrain=true`` always trains from scratch.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.config.validation import as_dict
from hyperrag.data.types import Dataset, Passage
from hyperrag.utils.hashing import passage_digest, stable_digest, text_digest

if TYPE_CHECKING:
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever

log = logging.getLogger(__name__)


def passage_hash(p: Passage) -> str:
    return passage_digest(p, length=16)


def settings_key(r: HyperRAGRetriever) -> str:
    """Digest of everything but the corpus that shapes the ball (ckpts are only reused under the same key)."""
    s = r.settings
    return stable_digest(getattr(r.encoder, "model_key", ""), r.variant, as_dict(s.keywords), as_dict(s.explicit),
                         as_dict(s.implicit), s.implicit_queries, s.fusion, s.query_closure_depth,
                         s.query_edge_repeat, as_dict(s.model), as_dict(s.train), length=16)


def _questions_key(questions: Sequence[str]) -> str:
    return text_digest("\x00".join(questions), length=16)


def dataset_questions(r: HyperRAGRetriever, dataset: Dataset) -> list[str]:
    """The query-file questions that become query nodes at index time (as in ``prepare``)."""
    if r.settings.implicit_queries == "query_file" and r.variant != "explicit":
        return list(dict.fromkeys(q.question for q in dataset.queries))
    return []


# ---- persistence ---------------------------------------------------------------------------------------------
def save_state(r: HyperRAGRetriever, folder: Path, questions: Sequence[str], save_model: bool = True) -> Path:
    """Write ``model.ckpt`` (Lightning layout), ``graph.json``, ``keywords.json``, ``corpus.json`` atomically."""
    import lightning as L

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.ckpt"

    def write(name: str, text: str) -> None:
        tmp = folder / f".{name}.tmp"
        tmp.write_text(text)
        tmp.replace(folder / name)

    if save_model:
        device = r.model.device
        r.model.cpu()
        tmp = folder / ".model.ckpt.tmp"
        torch.save({"state_dict": r.model.state_dict(), "hyper_parameters": dict(r.model.hparams),
                    "pytorch-lightning_version": L.__version__}, tmp)
        tmp.replace(path)
        r.model.to(device)
    write("graph.json", json.dumps(r.graph.to_dict()))
    write("keywords.json", json.dumps([sorted(k) for k in r.keyword_sets]))
    write("corpus.json", json.dumps({"settings": settings_key(r), "questions": _questions_key(questions),
                                     "passages": r.passage_hashes, "ids": r.passage_ids}))
    return path


def save_generation(r: HyperRAGRetriever) -> Path:
    """Save the updated ball as ``<folder of the ball it started from>/gen-N/model.ckpt``; returns the path."""
    base = Path(r.info["base_checkpoint"]).parent
    gens = [int(p.name[4:]) for p in base.glob("gen-*") if p.name[4:].isdigit()]
    folder = base / f"gen-{max(gens, default=0) + 1}"
    path = save_state(r, folder, r.base_questions)
    r.info["checkpoint"] = str(path)
    log.info("hyperrag: updated ball saved to %s", path)
    return path


@dataclass(frozen=True)
class CheckpointMatch:
    """A saved ball that the dataset's corpus can be reached from by deleting, then appending, passages.

    ``kind``: ``exact`` (same corpus), ``prefix`` (the ball's corpus is a strict prefix of the dataset's: only
    inserts) or ``updated`` (some of the ball's passages are gone: deletes, then inserts). The dataset's first
    ``reused`` passages are the ball's passages minus ``deleted`` (ids, in the ball's order); the rest of the
    dataset's passages are appended.
    """

    kind: str
    folder: Path
    reused: int
    total: int
    saved_ids: tuple[str, ...]
    deleted: tuple[str, ...]

    @property
    def inserted(self) -> int:
        return self.total - self.reused

    @property
    def reuse(self) -> float:
        """Share of the dataset's corpus that keeps its trained row."""
        return self.reused / max(self.total, 1)


def reuse_plan(saved: Sequence[str], hashes: Sequence[str]) -> tuple[int, list[int]]:
    """How far ``hashes`` (the dataset's passage hashes, in order) can be built from ``saved`` (a ball's).

    Returns ``(m, deleted)``: the longest ``m`` such that ``hashes[:m]`` is ``saved`` with the positions
    ``deleted`` removed (order preserved), and those positions. Passage hashes are unique within a corpus
    (they include the id), so the greedy left-to-right match is the longest one.
    """
    pos = {h: i for i, h in enumerate(saved)}
    last, m = -1, 0
    for h in hashes:
        i = pos.get(h)
        if i is None or i <= last:
            break
        last, m = i, m + 1
    kept = {pos[h] for h in hashes[:m]}
    return m, [i for i in range(len(saved)) if i not in kept]


def find_saved_ball(r: HyperRAGRetriever, dataset: Dataset) -> CheckpointMatch | None:
    """The best saved ball for ``dataset`` (see :class:`CheckpointMatch`), or ``None``.

    Candidates: every ``corpus.json`` under ``<models_dir>/hyperrag/<data>-<graph>-*/`` (bases and their
    ``gen-N``) with this retriever's settings key and the dataset's questions, from which at least one of the
    dataset's passages is reused. Best: most reused passages; ties: fewer deletions, then the newest save.
    An exact match is returned at once. The ``min_reuse`` guard is the caller's
    (:meth:`~hyperrag.retrievers.hyperrag.HyperRAGRetriever.index`).
    """
    root = r.models_dir / "hyperrag"
    if not root.exists():
        return None
    hashes = [passage_hash(p) for p in dataset.corpus.passages]
    skey, qkey = settings_key(r), _questions_key(dataset_questions(r, dataset))
    best: tuple[tuple[int, int, int], CheckpointMatch] | None = None
    for meta in sorted(root.glob(f"{dataset.name}-{r.variant}-*/**/corpus.json")):
        try:
            d = json.loads(meta.read_text())
            saved, ids = list(d["passages"]), list(d.get("ids") or [])
            mtime = meta.stat().st_mtime_ns
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if d.get("settings") != skey or d.get("questions") != qkey or not (meta.parent / "model.ckpt").exists():
            continue
        if saved == hashes:
            return CheckpointMatch("exact", meta.parent, len(saved), len(hashes), tuple(ids), ())
        m, gone = reuse_plan(saved, hashes)
        if m == 0 or (gone and len(ids) != len(saved)):  # deleting needs the saved ids (every save has them)
            continue
        kind = "updated" if gone else "prefix"
        match = CheckpointMatch(kind, meta.parent, m, len(hashes), tuple(ids), tuple(ids[i] for i in gone))
        rank = (m, -len(gone), mtime)
        if best is None or rank > best[0]:
            best = (rank, match)
    return None if best is None else best[1]


def load_state(r: HyperRAGRetriever, folder: Path, passages: Sequence[Passage | None]) -> None:
    """Restore the retriever's index state from a saved ball over ``passages`` (no training, no query graphs).

    ``passages``: the ball's passages in its order; ``None`` for one that is about to be deleted and whose text
    the dataset no longer holds — it gets its saved id and hash, an empty text and a zero embedding, and must be
    removed (:func:`delete_passages`) before anything reads it.
    """
    from hyperrag.hyperbolic import PoincareEmbedding
    from hyperrag.passage_graph import PassageGraph, QueryGraphBuilder

    saved = json.loads((folder / "corpus.json").read_text())
    if len(passages) != len(saved["passages"]):
        raise ValueError(f"{folder}: {len(passages)} passages given for a ball over {len(saved['passages'])}")
    ids = list(saved.get("ids") or [""] * len(passages))
    known = [p for p in passages if p is not None]
    r.texts = [p.content if p is not None else "" for p in passages]
    r.titles = [(p.title or p.id) if p is not None else ids[i] for i, p in enumerate(passages)]
    r.passage_ids = [p.id if p is not None else ids[i] for i, p in enumerate(passages)]
    r.passage_hashes = [passage_hash(p) if p is not None else saved["passages"][i] for i, p in enumerate(passages)]
    emb = r.encoder.encode([p.content for p in known], desc="passages")
    if len(known) < len(passages):
        full = emb.new_zeros(len(passages), emb.shape[1])
        full[torch.tensor([p is not None for p in passages])] = emb
        emb = full
    r.passage_emb = emb
    r.keyword_sets = [frozenset(k) for k in json.loads((folder / "keywords.json").read_text())]
    r.graph = PassageGraph.from_dict(json.loads((folder / "graph.json").read_text()))
    r.builder = QueryGraphBuilder(r.passage_emb, r.texts, r.settings.implicit, encoder=r.encoder, llm=r.llm,
                                  keyword_sets=r.keyword_sets)
    r.model = PoincareEmbedding.load_from_checkpoint(str(folder / "model.ckpt"), map_location="cpu")
    if r.graph.num_nodes != r.model.points.shape[0] or len(r.keyword_sets) != len(r.texts):
        raise ValueError(f"{folder}: the saved graph / keywords do not match the ball or the corpus")


def update_from(r: HyperRAGRetriever, match: CheckpointMatch, dataset: Dataset) -> None:
    """Load the ball of ``match`` and bring it to ``dataset``'s corpus: delete the ball's passages that are gone,
    append the new ones (only new + touched nodes train), save the result as the next generation (unless
    ``exact``). Fills ``r.info`` with ``loaded_from`` and the counts."""
    passages = dataset.corpus.passages
    gone = set(match.deleted)
    reused = iter(passages[: match.reused])
    load_state(r, match.folder, [None if pid in gone else next(reused) for pid in match.saved_ids])
    base = match.folder.parent if match.folder.name.startswith("gen-") else match.folder
    r.info = {"checkpoint": str(match.folder / "model.ckpt"), "base_checkpoint": str(base / "model.ckpt"),
              "loaded_from": match.kind, "reused_passages": match.reused,
              "deleted_passages": len(match.deleted), "inserted_passages": match.inserted}
    r.stream = None
    r.model.to(r.device)
    if match.deleted:
        delete_passages(r, list(match.deleted))
    if match.inserted:
        insert_passages(r, passages[match.reused:])
    if [passage_hash(p) for p in passages] != r.passage_hashes:  # the plan's invariant
        raise RuntimeError(f"{match.folder}: the updated ball's corpus is not the dataset's")
    if match.kind != "exact":
        save_generation(r)


# ---- updates ------------------------------------------------------------------------------------------------
def _ball(r: HyperRAGRetriever, epochs: int | None):  # type: ignore[no-untyped-def]
    from hyperrag.hyperbolic.streaming import StreamingBall

    s = r.settings
    if r.stream is not None:
        ball = r.stream
    else:  # the streaming machinery, without streaming: never due by itself, never prunes
        ball = StreamingBall(r.model, r.graph, r.variant, r.builder, update_frequency=2 ** 62,
                             epochs=s.update_epochs, max_query_age=None, batch_size=s.train.batch_size,
                             num_negatives=s.train.num_negatives, seed=s.train.seed,
                             query_closure_depth=s.query_closure_depth)
    ball.epochs = s.update_epochs if epochs is None else int(epochs)
    return ball


def _note_trained(r: HyperRAGRetriever, nodes: Any) -> None:
    """Record the passages whose rows an update trains (``r.updated_passage_ids``; every other row is frozen)."""
    p = r.graph.num_passages
    trained = getattr(r, "updated_passage_ids", None)
    if trained is None:
        trained = r.updated_passage_ids = set()
    trained.update(r.passage_ids[t] for t in nodes if t < p)


def _sync_builder(r: HyperRAGRetriever) -> None:
    r.builder.passage_emb = r.passage_emb.float()
    r.builder.texts = list(r.texts)
    r.builder.keyword_sets = list(r.keyword_sets)


def _refresh_query_graphs(r: HyperRAGRetriever, ball: Any, first: int, count: int) -> tuple[int, int]:
    """Query nodes whose dense candidates (top ``implicit.top_k``) now include a new passage get their query
    graph rebuilt (stand-in or LLM, as at index time); the edges of it that touch a new passage join the
    implicit graph, and the query node and those endpoints are marked touched. Returns (queries, edges)."""
    graph = r.graph
    if not graph.num_queries or first == 0:
        return 0, 0
    q_emb = r.encoder.encode(graph.questions, desc="queries").float()
    sims = q_emb @ r.passage_emb.float().T  # [Q, P + count]; the builder's dense candidates are this top-k
    kth = sims[:, :first].topk(min(r.settings.implicit.top_k, first), dim=1).values[:, -1]
    affected = torch.nonzero(sims[:, first:first + count].max(1).values >= kth).flatten().tolist()
    if not affected:
        return 0, 0
    p = graph.num_passages
    edges, _ = r.builder.build([graph.questions[j] for j in affected], q_emb[affected], num_passages=p)
    qmap = torch.tensor([p + j for j in affected], dtype=torch.long)
    node = lambda t: torch.where(t >= p, qmap[(t - p).clamp(0, len(affected) - 1)], t)
    edges = type(edges)(node(edges.parent), node(edges.child), edges.weight, edges.relation)
    is_new = lambda t: (t >= first) & (t < first + count)
    edges = edges.select(is_new(edges.parent) | is_new(edges.child))
    if len(edges):
        graph.add_queries([], edges)
        touched = set(edges.parent.tolist()) | set(edges.child.tolist())
        ball.touched.update(touched)
    return len({int(x) for x in edges.parent.tolist() if x >= p}), len(edges)


def insert_passages(r: HyperRAGRetriever, passages: Sequence[Passage], epochs: int | None = None,
                    refresh_queries: bool = True) -> dict[str, Any]:
    """Append ``passages`` to an indexed retriever and train only the new and touched nodes.

    ``refresh_queries``: existing query nodes whose dense candidates now hold a new passage get the new
    passages' part of their rebuilt query graph (:func:`_refresh_query_graphs`), so a question whose evidence
    arrives later is pulled towards it; ``False``: query graphs are left as they were built.

    Returns stats: ``inserted``, ``new_edges``, ``trained_nodes``, ``relations``, ``seconds`` (and its parts
    ``embed_keywords_s``, ``graph_s``, ``train_s``).
    """
    from hyperrag.passage_graph import extract_keywords, keyword_edges_incremental

    assert r.model is not None, "call index() first"
    t0 = time.perf_counter()
    known = set(r.passage_ids)
    ids = [p.id for p in passages]
    dup = [i for i in ids if i in known] + [i for n, i in enumerate(ids) if i in ids[:n]]
    if dup:
        raise ValueError(f"passage ids already in the corpus: {sorted(set(dup))[:5]}")
    if not passages:
        return {"inserted": 0, "new_edges": 0, "trained_nodes": 0, "relations": 0, "seconds": 0.0}
    texts = [p.content for p in passages]
    emb = r.encoder.encode(texts, desc="passages")
    kw = extract_keywords(texts, r.settings.keywords, cache_dir=r.keyword_cache, show_progress=False)
    t_features = time.perf_counter()
    graph = r.graph
    first = graph.num_passages
    keyword_sets = list(r.keyword_sets) + list(kw)
    edges = keyword_edges_incremental(keyword_sets, first, graph.explicit, r.settings.explicit)
    graph.pin(r.variant)
    ball = _ball(r, epochs)
    r.model.train()
    ball.add_passages(emb.to(r.model.device), edges)
    r.texts += texts
    r.titles += [p.title or p.id for p in passages]
    r.passage_ids += ids
    r.passage_hashes += [passage_hash(p) for p in passages]
    r.passage_emb = torch.cat([r.passage_emb, emb])
    r.keyword_sets = keyword_sets
    _sync_builder(r)
    refreshed, refresh_edges = _refresh_query_graphs(r, ball, first, len(passages)) if refresh_queries else (0, 0)
    t_graph = time.perf_counter()
    _note_trained(r, ball.touched)
    stats = ball.update()
    r.model.eval()
    t1 = time.perf_counter()
    out = {"inserted": len(passages), "new_edges": len(edges), "refreshed_queries": refreshed,
           "refresh_edges": refresh_edges, "trained_nodes": stats["trained_nodes"],
           "relations": stats["relations"], "seconds": round(t1 - t0, 3),
           "embed_keywords_s": round(t_features - t0, 3), "graph_s": round(t_graph - t_features, 3),
           "train_s": round(t1 - t_graph, 3)}
    r.info.setdefault("updates", []).append({"insert": out})
    r.info["query_nodes"] = graph.num_queries
    log.info("hyperrag insert: %s", out)
    return out


def delete_passages(r: HyperRAGRetriever, passage_ids: Sequence[str],
                    epochs: int | None = None) -> dict[str, Any]:
    """Remove passages (unknown ids are ignored) from the graph and the ball; see the module docstring."""
    assert r.model is not None, "call index() first"
    t0 = time.perf_counter()
    pos = {pid: i for i, pid in enumerate(r.passage_ids)}
    gone = sorted({pos[x] for x in passage_ids if x in pos})
    if not gone:
        return {"deleted": 0, "pruned_queries": 0, "reattached": 0, "roots": 0, "seconds": 0.0}
    graph = r.graph
    p_old = graph.num_passages
    gone_set = set(gone)
    forest = graph.pin(r.variant)
    orphaned_children = {c for p, c in zip(forest.edges.parent.tolist(), forest.edges.child.tolist())
                         if p in gone_set and c not in gone_set}
    reach = graph.query_passages()
    orphan_q = [q for q, nodes in enumerate(reach) if nodes and nodes <= gone_set]
    keep = torch.ones(p_old, dtype=torch.bool)
    keep[gone] = False
    source = graph.drop_passages(keep)
    if orphan_q:
        keep_q = torch.ones(graph.num_queries, dtype=torch.bool)
        keep_q[orphan_q] = False
        dropped_questions = [graph.questions[q] for q in orphan_q]
        source = source[graph.drop_queries(keep_q)]
    else:
        dropped_questions = []
    r.model.remap_nodes(source)
    if r.model.hparams.get("num_passages") is not None:
        r.model.hparams["num_passages"] = graph.num_passages
    new_id = {int(old): new for new, old in enumerate(source.tolist())}
    keep_l = keep.tolist()
    r.texts = [t for t, k in zip(r.texts, keep_l) if k]
    r.titles = [t for t, k in zip(r.titles, keep_l) if k]
    r.passage_ids = [t for t, k in zip(r.passage_ids, keep_l) if k]
    r.passage_hashes = [t for t, k in zip(r.passage_hashes, keep_l) if k]
    r.keyword_sets = [t for t, k in zip(r.keyword_sets, keep_l) if k]
    r.passage_emb = r.passage_emb[keep]
    _sync_builder(r)
    after = graph.forest(r.variant)
    moved = sorted(new_id[c] for c in orphaned_children if int(after.parent[new_id[c]]) >= 0)
    ball = _ball(r, epochs)
    if r.stream is not None:
        for q in dropped_questions:
            ball.last_seen.pop(q, None)
        ball.touched = {new_id[t] for t in ball.touched if t in new_id}
    stats: dict[str, Any] = {}
    if moved:
        ball.touched.update(moved)
        _note_trained(r, ball.touched)
        r.model.train()
        stats = ball.update()
        r.model.eval()
    out = {"deleted": len(gone), "pruned_queries": len(orphan_q), "reattached": len(moved),
           "roots": len(orphaned_children) - len(moved), "trained_nodes": stats.get("trained_nodes", 0),
           "seconds": round(time.perf_counter() - t0, 3)}
    r.info.setdefault("updates", []).append({"delete": out})
    r.info["query_nodes"] = graph.num_queries
    log.info("hyperrag delete: %s", out)
    return out
