"""A small Python API over the framework: raw documents in, ranked passages and answers with their evidence out.

    from hyperrag import RAG

    with RAG("hipporag2", index_dir="my_index", llm="local") as rag:
        rag.index(["Marie Curie was born in Warsaw.", {"id": "v", "title": "Vistula", "text": "..."}])
        rag.insert(["More text ..."])           # no rebuild
        rag.delete(["v"])                       # a document id (all its chunks) or a passage id
        hits = rag.retrieve(["Where was Marie Curie born?"], k=5)
        answers = rag.answer(["Which river flows through Marie Curie's birthplace?"])

A pipeline is the method's YAML composed exactly as ``retrieve.py method=<name>`` composes it (plus Hydra-style
``overrides`` and method-setting keywords, checked before anything loads: a bad value stops with one line). Everything
lives in ``index_dir``: the knowledge-graph index (:mod:`hyperrag.index`, so ``python -m hyperrag.index
insert|delete|stats|export`` and ``retrieve.py index_dir=`` work on it), the chunking it was made with (manifest), and
the method's derived stages (``derived/``: hierarchies, causal graphs, keyword sets, ...). :meth:`RAG.index`,
:meth:`RAG.insert` and :meth:`RAG.delete` hold the index's writer lock (:mod:`hyperrag.index.lock`): one writer at a
time, the next waits up to ``index_lock.timeout_s``; retrieving never waits. Documents are chunked by
semchunk (:mod:`hyperrag.index.chunking`), triples extracted by the configured LLM (resumable, every reply cached;
records may bring their own ``triples``), and the method's own extraction (keywords, causal pairs, module summaries,
gates) runs when its index is built. Without an LLM every skipped LLM step is counted in :attr:`RAG.llm_steps_skipped`
and warned about.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from typing_extensions import Self

from hyperrag.errors import InputError

log = logging.getLogger(__name__)

#: methods whose retrieval walks entities: an index without any triple cannot serve them
ENTITY_METHODS = ("hipporag2", "catrag", "hugrag")

Documents = str | Path | Iterable[str | Mapping[str, Any]]


@dataclass
class Hit:
    """A retrieved passage."""

    passage_id: str
    score: float
    title: str
    text: str


@dataclass
class Answer:
    """An answer with its evidence.

    Attributes:
        answer: the answer text; ``None`` when no LLM answered (``llm=none``; counted as a skipped ``answer`` step).
        evidence: the passages the answer cites (the reader's supporting ids, or the method's own), else the
            passages it was given.
        passages: the passages the reader was shown, best first.
        ok: an LLM produced a valid answer.
        error: why not, when it failed.
    """

    question: str
    answer: str | None
    evidence: list[Hit] = field(default_factory=list)
    passages: list[Hit] = field(default_factory=list)
    ok: bool = False
    error: str | None = None


class RAG:
    """A retrieval pipeline over one index directory.

    Args:
        method: a method config name (``dense``, ``bm25``, ``hipporag2``, ``catrag``, ``hugrag``, ``hyperrag``,
            ``cdfrag``).
        index_dir: where the index lives (created by :meth:`index`; an existing one is opened).
        llm: the LLM backend config (``local``: embedded SmolLM2; ``none``; ``vllm``; ``openai_compatible``).
        embedder: the embedder config (``minilm``; ``openai_compatible``).
        extractor: where triples come from (``hydra_configs/extractor/``): ``llm`` (the configured LLM's OpenIE) or
            ``spacy`` (the LLM-free spaCy stand-in: entity-graph methods work with ``llm="none"``); ``None``: the
            config's default (``llm``).
        overrides: more Hydra overrides of the ``retrieve`` config, e.g. ``["embedder.model=/models/e5"]``.
        **settings: the method's settings to change (nested dicts merge key by key), e.g. ``damping=0.6``.
    """

    def __init__(self, method: str = "hipporag2", index_dir: str | Path = "rag_index", *, llm: str = "local",
                 embedder: str = "minilm", extractor: str | None = None, overrides: Sequence[str] = (),
                 **settings: Any) -> None:
        from hydra.utils import instantiate

        from hyperrag.config.validation import validate
        from hyperrag.index.kg_index import GraphSettings
        from hyperrag.llm import build_llm

        self.index_dir = Path(index_dir).resolve()
        self.cfg = _compose(method, llm, embedder, self.index_dir, [*([f"extractor={extractor}"] if extractor else []), *overrides], settings)
        self.method = method
        self.settings = instantiate(self.cfg.method.retriever)
        if hasattr(self.settings, "index_root"):  # the method's derived stages live in the index directory
            self.settings = replace(self.settings, index_root=str(self.index_dir / "derived"))
        self.chunking = instantiate(self.cfg.chunking)
        self.graph = validate(GraphSettings, _plain(self.cfg.graph), "graph")
        self.encoder = instantiate(self.cfg.embedder)
        self.llm = build_llm(self.cfg.llm)
        self.extractor = instantiate(self.cfg.extractor)
        self.cache_dir = Path(str(self.cfg.cache_dir))
        #: LLM steps that did not run (no LLM, failed call), by step: ``openie``, ``answer`` and the method's own
        self.llm_steps_skipped: Counter[str] = Counter()
        self._retriever: Any = None
        self._dataset: Any = None

    # ---- lifetime ----------------------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the LLM server this pipeline started (if any)."""
        self.llm.stop()

    # ---- documents in ------------------------------------------------------------------------------------------
    def index(self, documents: Documents) -> dict[str, Any]:
        """Index ``documents`` (strings, ``{"id", "title", "text", "triples"}`` records, or a JSONL / JSON file of
        records) into ``index_dir``, replacing the index there (the same documents and settings are loaded, not
        rebuilt), then build the method's own stages. Returns what was built."""
        from hyperrag.index.chunking import read_documents
        from hyperrag.index.documents import build_from_documents
        from hyperrag.index.lock import index_entries

        t0 = time.perf_counter()
        docs = read_documents(documents)
        if index_entries(self.index_dir) and not (self.index_dir / "manifest.json").is_file():
            raise InputError("exists and is not a hyperrag index; give an empty or new folder", path=self.index_dir,
                             field="index_dir")
        with self._writer():
            kg, report = build_from_documents(self.index_dir, docs, self.chunking, self.encoder, self.graph, self.llm,
                                              self.cache_dir, replace=True, extractor=self.extractor)
            self._count_skipped("openie", report["openie_skipped"])
            self._retriever = None
            self._ready()
        return {"documents": len(docs), "passages": kg.graph.num_passages, "entities": kg.graph.num_entities,
                "edges": kg.graph.num_edges, "extraction": report, "built": kg.built,
                "seconds": round(time.perf_counter() - t0, 3)}

    def insert(self, documents: Documents) -> dict[str, Any]:
        """Add documents to the index without a rebuild (chunked as the index was; triples extracted as in
        :meth:`index`); the method's stages follow on the next query. Returns what changed."""
        from hyperrag.index.chunking import read_documents
        from hyperrag.index.documents import index_chunking, insert_from_documents

        docs = read_documents(documents)
        with self._writer():
            manifest = self._manifest()
            result, report = insert_from_documents(self.index_dir, docs, index_chunking(manifest) or self.chunking,
                                                   self.encoder, self.llm, self.cache_dir, extractor=self.extractor)
        self._count_skipped("openie", report["openie_skipped"])
        self._retriever = None
        return {**result.summary(), "extraction": report}

    def delete(self, ids: Sequence[str]) -> dict[str, Any]:
        """Remove documents (a document id removes all its chunks) or single passages, and every node and edge
        only they supported. Raises :class:`InputError` naming an id the index does not hold."""
        from hyperrag.index.chunking import document_passages
        from hyperrag.index.passages import index_passage_ids
        from hyperrag.index.update import delete_documents

        self._manifest()
        with self._writer():
            indexed, _, _ = index_passage_ids(self.index_dir)
            passages: list[str] = []
            for doc_id in [ids] if isinstance(ids, str) else ids:
                found = document_passages(doc_id, indexed)
                if not found:
                    raise InputError(f"no document or passage {doc_id!r} in the index", path=self.index_dir,
                                     field="ids")
                passages.extend(found)
            result = delete_documents(self.index_dir, list(dict.fromkeys(passages)))
        self._retriever = None
        return result.summary()

    # ---- questions in ------------------------------------------------------------------------------------------
    def retrieve(self, questions: str | Sequence[str], k: int = 5) -> list[list[Hit]]:
        """The ``k`` best passages for every question (one list per question, best first)."""
        questions = [questions] if isinstance(questions, str) else list(questions)
        rows = self._rank(questions, k)
        return [[self._hit(pid, score) for pid, score in zip(r["ranked_ids"], r["scores"])] for r in rows]

    def answer(self, questions: str | Sequence[str]) -> list[Answer]:
        """An answer per question from its top ``answer_top_n`` passages (the config's; the method's own answer
        when it generates one), with the evidence it rests on."""
        from hyperrag.generation.reader import answer_rows, reader_prompt

        questions = [questions] if isinstance(questions, str) else list(questions)
        top_n = int(self.cfg.answer_top_n) or 5
        rows = self._rank(questions, top_n)
        answer_rows(self.llm, rows, self._dataset.corpus, top_n=top_n, progress=False,
                    style=str(self.cfg.get("answer_style", "short")), prompt=reader_prompt(self.cfg))
        out = []
        for row in rows:
            shown = [self._hit(pid, s) for pid, s in zip(row["ranked_ids"][:top_n], row["scores"][:top_n])]
            if "answer" not in row:
                self._count_skipped("answer", 1)
                out.append(Answer(row["question"], None, shown, shown, False, "no LLM configured"))
                continue
            by_id = {h.passage_id: h for h in shown}
            cited = [by_id.get(pid) or self._hit(pid, 0.0) for pid in row.get("supporting_ids", [])
                     if pid in self._dataset.corpus]
            out.append(Answer(row["question"], row["answer"] if row.get("answer_ok") else None, cited or shown, shown,
                              bool(row.get("answer_ok")), row.get("answer_error")))
        return out

    # ---- internals ---------------------------------------------------------------------------------------------
    def _writer(self) -> Any:
        """The index's writer lock (:mod:`hyperrag.index.lock`) for one :meth:`index` / :meth:`insert` /
        :meth:`delete`: another writer of ``index_dir`` waits up to ``index_lock.timeout_s``, then stops."""
        from hyperrag.index.lock import index_writer

        return index_writer(self.index_dir, float(self.cfg.index_lock.timeout_s), f"hyperrag.RAG({self.method!r})")

    def _count_skipped(self, step: str, count: int) -> None:
        if count > 0:
            self.llm_steps_skipped[step] += count

    def _manifest(self) -> dict[str, Any]:
        from hyperrag.index.store import IndexDirectory

        manifest = IndexDirectory(self.index_dir).manifest()
        if manifest is None:
            raise InputError("no index here yet: call index(documents) first", path=self.index_dir, field="index_dir")
        return manifest

    def _ready(self) -> Any:
        """The method's retriever over the current index (built once per index version)."""
        if self._retriever is not None:
            return self._retriever
        from hyperrag.data.types import Corpus, Dataset
        from hyperrag.index.passages import dataset_for_index
        from hyperrag.runners.prepare import build_retriever

        manifest = self._manifest()
        if self.method in ENTITY_METHODS and not manifest.get("stats", {}).get("entities"):
            raise InputError(f"{self.method} walks an entity graph, and this index has no triples (no LLM extracted "
                             "any); use extractor='spacy' (LLM-free), configure an LLM (llm=local|vllm|"
                             "openai_compatible), give records with their 'triples', or use dense / bm25 / hyperrag / "
                             "cdfrag", path=self.index_dir, field="llm")
        self._dataset = dataset_for_index(Dataset(f"rag-{self.index_dir.name}", Corpus([]), []), self.index_dir)
        retriever = build_retriever(self.settings, self.encoder, self.llm, self.index_dir,
                                    device=str(self.cfg.hardware.device))
        retriever.index(self._dataset)
        self._retriever = retriever
        return retriever

    def _rank(self, questions: list[str], k: int) -> list[dict[str, Any]]:
        retriever = self._ready()
        before = Counter(retriever.skipped)
        rows: list[dict[str, Any]] = []
        batch = int(self.cfg.batch_size)
        for start in range(0, len(questions), batch):
            part = questions[start: start + batch]
            out = retriever.retrieve(part, k)
            ids = self._dataset.corpus.ids
            for b, q in enumerate(part):
                rows.append({"question": q, "ranked_ids": [ids[i] for i in out.indices[b].tolist()],
                             "scores": out.scores[b].tolist(),
                             "details": out.details[b] if b < len(out.details) else {}})
        self.llm_steps_skipped.update(Counter(retriever.skipped) - before)
        return rows

    def _hit(self, passage_id: str, score: float) -> Hit:
        p = self._dataset.corpus[self._dataset.corpus.position(passage_id)]
        return Hit(passage_id, float(score), p.title, p.text)


def _plain(node: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(node, resolve=True)


def _compose(method: str, llm: str, embedder: str, index_dir: Path, overrides: Sequence[str],
             settings: Mapping[str, Any]) -> Any:
    """The ``retrieve`` config of the pipeline, checked (one :class:`InputError` line for a bad value)."""
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from hyperrag.config import compose_config
    from hyperrag.runners.run_settings import check_retrieve_config

    try:
        cfg = compose_config("retrieve", [f"method={method}", f"llm={llm}", f"embedder={embedder}", "tracking=none",
                                          f"index_dir={index_dir}", *overrides])
        if settings:
            OmegaConf.set_struct(cfg, False)
            cfg.method.retriever = OmegaConf.merge(cfg.method.retriever, dict(settings))
    except (HydraException, OmegaConfBaseException) as err:
        raise InputError(f"cannot compose the pipeline: {str(err).splitlines()[0]}", field="method") from None
    check_retrieve_config(cfg)
    return cfg


__all__ = ["RAG", "Answer", "Hit"]
