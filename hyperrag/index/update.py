"""Insert and delete documents in a built knowledge-graph index directory, without a full rebuild.

Each update writes a new generation folder (``gen-<n>/``: graph, provenance, passages, embeddings) and then
the manifest, atomically; the manifest is the commit point, so a crash mid-update leaves the previous
generation intact (the half-written folder is cleared by the next update). Each update holds the index's writer
lock (:mod:`hyperrag.index.lock`: a second writer waits, then stops naming the holder), and reads the index only
once it holds it, so concurrent updates land one after the other. The manifest's
``updates`` list records every operation; ``touched_nodes`` in the result is the hook for local
Leiden / summary / gate / Poincaré updates (other stages: not redone here).

    result = insert_documents("idx/", corpus=new_passages, openie=new_records, encoder=encoder)
    result = delete_documents("idx/", ["p07", "p11"])
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.data.openie import OpenIERecords
from hyperrag.data.types import Corpus, Passage
from hyperrag.errors import InputError
from hyperrag.graph.incremental import UpdateResult, delete_passages, insert_passages
from hyperrag.index.kg_index import read_kg_files, save_kg_files
from hyperrag.index.lock import index_writer
from hyperrag.index.passages import PASSAGES_FILE, read_passages
from hyperrag.index.store import IndexDirectory
from hyperrag.utils.hashing import stable_digest

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder

log = logging.getLogger(__name__)
# manifest fields every commit writes anew; any other field (chunking, ...) is carried from generation to generation
_REWRITTEN = ("format_version", "key", "created", "settings", "inputs", "files", "stats", "updates", "passage_ids")


def _open(path: str | Path) -> tuple[IndexDirectory, dict[str, Any]]:
    directory = IndexDirectory(path, stage="graph")
    if not directory.path.is_dir():
        raise InputError("index directory not found", path=directory.path)
    return directory, directory.verify()


def _passages_in_order(result: UpdateResult, known: list[Passage] | None) -> list[Passage] | None:
    """The stored passage texts for the new graph (None when the index stored none: built by an older version)."""
    if known is None:
        return None
    by_id = {p.id: p for p in known}
    return [by_id[pid] for pid in result.graph.passage_ids]


def _commit(directory: IndexDirectory, manifest: dict[str, Any], result: UpdateResult, op: dict[str, Any],
            passages: list[Passage] | None = None) -> None:
    gens = [int(p.name[4:]) for p in directory.path.glob("gen-*") if p.name[4:].isdigit()]
    gen = max(gens, default=0) + 1
    folder = directory.path / f"gen-{gen}"
    if folder.exists():
        shutil.rmtree(folder)
    files = save_kg_files(folder, result.graph, result.embeddings, result.provenance, prefix=f"gen-{gen}/",
                          passages=passages)
    updates = [*manifest.get("updates", []), {**op, "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                               **result.summary()}]
    key = stable_digest({"base": manifest["key"], "op": op})
    kept = {k: v for k, v in manifest.items() if k not in _REWRITTEN}  # e.g. the chunking the index was made with
    directory.write_manifest(key, manifest["settings"], manifest["inputs"], files, result.graph.stats,
                             extra={**kept, "updates": updates, "passage_ids": stable_digest(result.graph.passage_ids)})
    keep = folder.name
    for stale in list(directory.path.glob("gen-*")):  # after the commit: older generations are garbage
        if stale.name != keep:
            shutil.rmtree(stale, ignore_errors=True)
    for name in ("graph.pt", "graph.json", "provenance.pt", "embeddings.pt", PASSAGES_FILE):
        (directory.path / name).unlink(missing_ok=True)


def _provenance_or_fail(directory: IndexDirectory, prov: Any) -> Any:
    if prov is None:
        raise directory.corrupt("provenance.pt", "missing (index built by an older version)", "graph")
    return prov


def delete_documents(index: str | Path, passage_ids: Sequence[str],
                     lock_timeout: float | None = None) -> UpdateResult:
    """Delete passages and every node and edge supported only by them.

    ``lock_timeout``: seconds to wait for another writer of the index (``None``: ``index_lock.timeout_s``).
    """
    with index_writer(index, lock_timeout, create=False):
        return _delete(index, passage_ids)


def _delete(index: str | Path, passage_ids: Sequence[str]) -> UpdateResult:
    directory, manifest = _open(index)
    graph, emb, prov = read_kg_files(directory, manifest)
    try:
        result = delete_passages(graph, emb, _provenance_or_fail(directory, prov), list(dict.fromkeys(passage_ids)))
    except KeyError as err:
        raise InputError(str(err.args[0]), field="ids") from None
    _commit(directory, manifest, result, {"op": "delete", "ids": stable_digest(sorted(passage_ids)),
                                          "count": len(passage_ids)},
            _passages_in_order(result, read_passages(directory, manifest)))
    return result


def insert_documents(index: str | Path, corpus: Corpus, openie: OpenIERecords, encoder: Encoder,
                     note: dict[str, Any] | None = None, lock_timeout: float | None = None) -> UpdateResult:
    """Insert ``corpus`` passages (with their OpenIE records, ``openie.triples[i]`` for ``corpus[i]``).

    ``note``: more fields for the manifest's record of this update (e.g. how the triples were extracted);
    ``lock_timeout``: seconds to wait for another writer of the index (``None``: ``index_lock.timeout_s``).
    """
    with index_writer(index, lock_timeout, create=False):
        return _insert(index, corpus, openie, encoder, note)


def _insert(index: str | Path, corpus: Corpus, openie: OpenIERecords, encoder: Encoder,
            note: dict[str, Any] | None) -> UpdateResult:
    directory, manifest = _open(index)
    encoder_key = manifest.get("inputs", {}).get("encoder")
    if encoder_key and getattr(encoder, "model_key", encoder_key) != encoder_key:
        raise InputError(f"the index was embedded with {encoder_key!r}, not {encoder.model_key!r}",
                         field="embedder")
    graph, emb, prov = read_kg_files(directory, manifest)
    settings = manifest["settings"]
    try:
        result = insert_passages(graph, emb, _provenance_or_fail(directory, prov), corpus.passages, openie.triples,
                                 encoder, **settings)
    except KeyError as err:
        raise InputError(str(err.args[0]), path=corpus.source, field="id") from None
    known = read_passages(directory, manifest)
    _commit(directory, manifest, result, {"op": "insert", "source": corpus.source, "count": len(corpus),
                                          "openie": openie.source, **(note or {})},
            _passages_in_order(result, None if known is None else known + list(corpus.passages)))
    return result


__all__ = ["delete_documents", "insert_documents"]
