"""The passages of an index directory — the retrieval universe of ``retrieve.py index_dir=DIR``.

An index stores its passages' texts (``passages.jsonl``, in graph order: passage ``j`` is node
``E + j``), kept in step with insert/delete, so an updated index is self-contained. Indexes built
before this file existed fall back to the texts of the dataset's corpus file.

:func:`dataset_for_index` turns a dataset into one whose corpus *is* the index's passages, in the
index's order (the corpus file may list them in another order, miss inserted ones or still hold
deleted ones), so that every retriever ranks exactly the indexed passages and ranked positions map
to their ids. Gold ids of the queries must name indexed passages.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperrag.data.types import Corpus, Dataset, Passage
from hyperrag.errors import InputError
from hyperrag.index.store import IndexDirectory
from hyperrag.utils.atomic import atomic_write_jsonl

log = logging.getLogger(__name__)
PASSAGES_FILE = "passages.jsonl"


def write_passages(folder: Path, passages: Sequence[Passage]) -> str:
    """Write ``passages.jsonl`` (atomically) into ``folder``; return its name."""
    atomic_write_jsonl(folder / PASSAGES_FILE, ({"id": p.id, "title": p.title, "text": p.text} for p in passages))
    return PASSAGES_FILE


def graph_folder(directory: IndexDirectory, manifest: dict[str, Any]) -> Path:
    """The folder holding ``graph.pt`` (the index root, or the current generation after updates)."""
    for name in manifest["files"]:
        if Path(name).name == "graph.pt":
            return directory.path / Path(name).parent
    raise directory.corrupt("manifest.json", "lists no graph.pt", "graph")


def read_passages(directory: Any, manifest: dict[str, Any]) -> list[Passage] | None:
    """The passages listed in the manifest's ``passages.jsonl`` (None for an index that stores none).

    Args:
        directory: the :class:`~hyperrag.index.store.IndexDirectory` (already verified).
    """
    name = next((n for n in manifest["files"] if Path(n).name == PASSAGES_FILE), None)
    if name is None:
        return None
    passages = []
    try:
        with open(directory.path / name, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    passages.append(Passage(row["id"], row.get("title", ""), row["text"]))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise directory.corrupt(name, f"unreadable ({type(err).__name__})", "graph") from None
    return passages


def index_passage_ids(path: str | Path) -> tuple[list[str], list[Passage] | None, str]:
    """Verify the index at ``path``; return (passage ids in graph order, stored passages or None, index key)."""
    directory = IndexDirectory(path, stage="graph")
    if not directory.path.is_dir():
        raise InputError("index directory not found (build one with `python -m hyperrag.index build`)",
                         path=directory.path, field="index_dir")

    def read() -> tuple[list[str], list[Passage] | None, str]:
        manifest = directory.verify()
        meta = graph_folder(directory, manifest) / "graph.json"
        try:
            ids = json.loads(meta.read_text(encoding="utf-8"))["passage_ids"]
        except (OSError, ValueError, KeyError) as err:
            raise directory.corrupt(str(meta.relative_to(directory.path)), f"unreadable ({type(err).__name__})",
                                    "graph") from None
        return list(ids), read_passages(directory, manifest), str(manifest.get("key", ""))

    return directory.read_stable(read)  # no lock: a generation published meanwhile is read instead


def dataset_for_index(dataset: Dataset, index_dir: str | Path) -> Dataset:
    """``dataset`` with its corpus replaced by the passages of the index at ``index_dir``, in index order.

    Texts come from the index (``passages.jsonl``), else from ``dataset.corpus`` by id. Raises
    :class:`InputError` when a gold id of a query is not an indexed passage, or when an indexed passage
    has no text anywhere.
    """
    ids, stored, _ = index_passage_ids(index_dir)
    by_id = {p.id: p for p in stored} if stored is not None else {}
    if stored is None:
        missing = [pid for pid in ids if pid not in dataset.corpus]
        if missing:
            raise InputError(f"{len(missing)} indexed passage(s) (e.g. {missing[:3]}) are not in the corpus file "
                             f"{dataset.corpus.source or dataset.name!r} and this index stores no passage texts; "
                             "give a data.corpus that holds them", path=index_dir, field="data.corpus")
        by_id = {pid: dataset.corpus[dataset.corpus.position(pid)] for pid in ids}
    corpus = Corpus([by_id[pid] for pid in ids], source=f"{index_dir} ({PASSAGES_FILE})")
    for q in dataset.queries:
        unknown = [g for g in q.gold_ids if g not in corpus]
        if unknown:
            raise InputError(f"query {q.id!r}: gold passage id(s) {unknown[:3]} are not in the index "
                             "(deleted or never inserted); fix the query file or insert them",
                             path=index_dir, field="gold_ids")
    extra = len(set(dataset.corpus.ids) - set(ids))
    new = len(set(ids) - set(dataset.corpus.ids))
    log.info("retrieving over the %d passages of index %s (%d not in the corpus file, %d corpus passages not "
             "indexed)", len(ids), index_dir, new, extra)
    return Dataset(dataset.name, corpus, dataset.queries, dataset.openie_path, dataset.openie_source)


__all__ = ["PASSAGES_FILE", "dataset_for_index", "index_passage_ids", "read_passages", "write_passages"]
