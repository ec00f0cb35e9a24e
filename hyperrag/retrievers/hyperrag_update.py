"""Saved HyperRAG balls: their keys, which one a dataset can reuse, and bringing it up to date.

Every ball is saved in ``<models_dir>/hyperrag/<data>-<graph>-<key>/`` by
:meth:`~hyperrag.hyperbolic.ball_index.BallIndex.save` (``model.ckpt``, ``graph.json``, ``keywords.json``,
``corpus.json``); an updated one in ``<that folder>/gen-N/`` (:func:`save_generation`). Two digests decide
reuse:

* :func:`settings_key` — everything but the corpus that shapes the ball: the embedder, the graph variant, every
  passage-graph / model / training setting, the fusion rule after an update (``update.fusion``) and **which LLM built the query graphs** (:func:`llm_identity`:
  ``none``, the oracle with its gold's digest, or the model, with the prompt versions of the three tasks), so an
  LLM run never reuses a ball built LLM-free or by another model (a ball without query graphs, ``explicit``,
  is the same whichever LLM is configured);
* the questions whose query graphs are in the ball.

:func:`find_saved_ball` (what ``HyperRAGRetriever.index`` runs first) looks for a saved ball with both keys
whose corpus the dataset's corpus can be reached from by deleting some passages (order kept) and appending
others — how an index directory changes under ``python -m hyperrag.index insert|delete`` — matched by
:func:`~hyperrag.hyperbolic.ball_index.passage_hash`:

* ``exact`` — same corpus: loaded;
* ``prefix`` — the ball's corpus is a strict prefix: loaded, the rest inserted;
* ``updated`` — some of the ball's passages are gone: loaded, those deleted, the rest inserted.

The candidate reusing the most passages wins (ties: fewer deletions, then the newest). :func:`update_from`
applies the plan and saves the result as the next generation. Unless at least ``update.min_reuse`` of the final
corpus keeps its trained row, the retriever trains from scratch instead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.config.validation import as_dict
from hyperrag.data.types import Dataset
from hyperrag.hyperbolic.ball_index import BallIndex, passage_hash
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder, LanguageModel
    from hyperrag.retrievers.settings import HyperRAGSettings

log = logging.getLogger(__name__)

QUERY_GRAPH_TASKS = ("passage_selection", "passage_relations", "missing_concepts")


def llm_identity(llm: LanguageModel | None) -> str:
    """Which LLM builds query graphs: ``none``, or ``<kind>:<model>`` with the prompt versions of its tasks (the
    oracle's model name holds the digest of its gold)."""
    if llm is None or not getattr(llm, "available", False):
        return "none"
    from hyperrag.llm.tasks import get_task

    versions = ",".join(f"{t}={get_task(t).SCHEMA_VERSION}" for t in QUERY_GRAPH_TASKS)
    return f"{getattr(llm, 'kind', 'llm')}:{getattr(llm, 'model', None) or '?'}[{versions}]"


def settings_key(settings: HyperRAGSettings, encoder: Encoder, llm: LanguageModel | None) -> str:
    """16 hex digits of everything but the corpus that shapes a ball (see the module docstring)."""
    s = settings
    builds_query_graphs = dataset_question_graphs(s)
    return stable_digest(getattr(encoder, "model_key", ""), s.graph, s.query_graph, as_dict(s.keywords),
                         as_dict(s.explicit),
                         as_dict(s.key_entity), as_dict(s.implicit), s.implicit_queries, s.fusion,
                         s.query_closure_depth, s.query_edge_repeat, as_dict(s.model), as_dict(s.train),
                         llm_identity(llm) if builds_query_graphs else "none", s.update.fusion, length=16)


def dataset_question_graphs(settings: HyperRAGSettings) -> bool:
    """Whether the index builds the query file's questions' graphs into the ball (``protocol: transductive``;
    under ``streaming`` a question's graph joins only when it arrives)."""
    return (settings.implicit_queries == "query_file" and settings.graph != "explicit"
            and settings.protocol == "transductive")


def dataset_questions(settings: HyperRAGSettings, dataset: Dataset) -> list[str]:
    """The questions whose query graphs are built at index time (the query file's, text only)."""
    if dataset_question_graphs(settings):
        return list(dict.fromkeys(q.question for q in dataset.queries))
    return []


def save_generation(ball: BallIndex, base: Path) -> Path:
    """Save an updated ball as ``<base>/gen-N/`` (N one more than the last); returns its ``model.ckpt``."""
    gens = [int(p.name[4:]) for p in base.glob("gen-*") if p.name[4:].isdigit()]
    path = ball.save(base / f"gen-{max(gens, default=0) + 1}")
    log.info("hyperrag: updated ball saved to %s", path)
    return path


@dataclass(frozen=True)
class CheckpointMatch:
    """A saved ball that the dataset's corpus can be reached from by deleting, then appending, passages.

    The dataset's first ``reused`` passages are the ball's passages minus ``deleted`` (ids, in the ball's
    order); the rest of the dataset's passages are appended.
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

    @property
    def base(self) -> Path:
        """The from-scratch ball this one descends from (itself unless it is a ``gen-N``)."""
        return self.folder.parent if self.folder.name.startswith("gen-") else self.folder


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


def find_saved_ball(root: Path, dataset: Dataset, variant: str, skey: str, qkey: str) -> CheckpointMatch | None:
    """The best saved ball under ``root`` (``<models_dir>/hyperrag``) for ``dataset`` (see
    :class:`CheckpointMatch`), or ``None``: candidates are every ``corpus.json`` under
    ``<data>-<variant>-*/`` (bases and their ``gen-N``) with keys ``skey`` / ``qkey`` that reuse at least one
    passage; best: most reused, then fewer deletions, then newest. An exact match is returned at once."""
    if not root.exists():
        return None
    hashes = [passage_hash(p) for p in dataset.corpus.passages]
    best: tuple[tuple[int, int, int], CheckpointMatch] | None = None
    for meta in sorted(root.glob(f"{dataset.name}-{variant}-*/**/corpus.json")):
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
        match = CheckpointMatch("updated" if gone else "prefix", meta.parent, m, len(hashes), tuple(ids),
                                tuple(ids[i] for i in gone))
        rank = (m, -len(gone), mtime)
        if best is None or rank > best[0]:
            best = (rank, match)
    return None if best is None else best[1]


def update_from(match: CheckpointMatch, dataset: Dataset, settings: HyperRAGSettings, encoder: Encoder,
                llm: LanguageModel | None, device: str, skey: str) -> tuple[BallIndex, dict[str, Any]]:
    """Load the ball of ``match`` and bring it to ``dataset``'s corpus: delete the ball's passages that are
    gone, append the new ones (only new + touched nodes train), save the result as the next generation (unless
    ``exact``). Returns the ball and what happened (``loaded_from``, counts, the updates' stats)."""
    passages = dataset.corpus.passages
    gone = set(match.deleted)
    reused = iter(passages[: match.reused])
    ball = BallIndex.load(match.folder, [None if pid in gone else next(reused) for pid in match.saved_ids],
                          settings, encoder, llm, device)
    ball.settings_key = skey
    ball.model.to(device)
    info: dict[str, Any] = {"checkpoint": str(match.folder / "model.ckpt"),
                            "base_checkpoint": str(match.base / "model.ckpt"), "loaded_from": match.kind,
                            "reused_passages": match.reused, "deleted_passages": len(match.deleted),
                            "inserted_passages": match.inserted, "updates": []}
    if match.deleted:
        info["updates"].append({"delete": ball.delete(list(match.deleted), settings.update_epochs)})
    if match.inserted:
        info["updates"].append({"insert": ball.insert(passages[match.reused:], settings.update_epochs)})
    if [passage_hash(p) for p in passages] != ball.table.hashes:  # the plan's invariant
        raise RuntimeError(f"{match.folder}: the updated ball's corpus is not the dataset's")
    if match.kind != "exact":
        info["checkpoint"] = str(save_generation(ball, match.base))
    return ball, info
