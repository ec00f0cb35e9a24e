"""OpenIE indexing of a corpus with the configured LLM: per passage, resumable, HippoRAG file format.

For every passage: named entities, then triples given those entities (HippoRAG style), or one
GraphRAG-style extraction (typed entities, relations with strength). Each finished passage is
appended to a JSONL checkpoint at once, so a killed run resumes with only the missing passages; the
response cache additionally makes any repeated request free. The final file has the format of
``musique_dev/openie_gpt-3.5-turbo-1106.json`` (read by :func:`hyperrag.data.openie.read_openie`)::

    {"docs": [{"idx": i, "passage": "Title\\nText", "extracted_entities": [...],
               "extracted_triples": [[s, r, o], ...]}, ...], "ents_by_doc": [...], ...}

Usage from sync code::

    report = run_openie(corpus.passages, llm, output_path="index/openie.json")
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.llm.stages import stop_if_nothing_succeeded
from hyperrag.llm.tasks.base import passage_string
from hyperrag.llm.tasks.openie_graphrag import GraphExtraction
from hyperrag.llm.tasks.openie_hipporag import NamedEntityExtraction, TripleExtraction
from hyperrag.llm.types import TaskResult
from hyperrag.utils.atomic import append_durably, atomic_write_text, read_jsonl_log
from hyperrag.utils.hashing import Hasher, text_digest

if TYPE_CHECKING:
    from hyperrag.data.types import Dataset
    from hyperrag.protocols import LanguageModel

log = logging.getLogger(__name__)

STYLES = ("hipporag", "graphrag")


@dataclass
class OpenIEReport:
    total: int
    resumed: int  # passages already in the checkpoint
    extracted: int  # passages extracted in this run
    failed: list[int] = field(default_factory=list)  # positions without a valid extraction
    failures: dict[int, str] = field(default_factory=dict)
    output_path: str | None = None
    checkpoint_path: str | None = None

    @property
    def ok(self) -> bool:
        return not self.failed


def read_checkpoint(path: Path, digests: list[str]) -> dict[int, dict[str, Any]]:
    """Records of finished passages whose text still matches; a torn last line (killed run) is cut off,
    so the next append starts on a fresh line."""
    done: dict[int, dict[str, Any]] = {}
    for rec in read_jsonl_log(path):
        try:
            i = int(rec["idx"])
        except (ValueError, KeyError, TypeError):
            continue
        if 0 <= i < len(digests) and rec.get("digest") == digests[i]:
            done[i] = rec
    return done


class OpenIEIndexer:
    """Runs OpenIE over passages with ``llm`` (any :class:`~hyperrag.llm.base.LLM`).

    Args:
        llm: the model (``llm.available`` must be true).
        style: ``hipporag`` (NER then triples) or ``graphrag`` (typed entities and relations).
        checkpoint_path: JSONL of finished passages (default: ``output_path`` + ``.ckpt.jsonl``).
        progress: show a tqdm bar.
    """

    def __init__(self, llm: LanguageModel, *, style: str = "hipporag", progress: bool = True) -> None:
        if style not in STYLES:
            raise ValueError(f"openie style {style!r}; expected one of {STYLES}")
        self.llm = llm
        self.style = style
        self.progress = progress
        self.ner, self.triples, self.graph = NamedEntityExtraction(), TripleExtraction(), GraphExtraction()

    async def extract_one(self, session: Any, text: str) -> tuple[dict[str, Any] | None, str | None]:
        """``(record fields, None)`` or ``(None, error)`` for one passage string."""
        if self.style == "graphrag":
            res: TaskResult = await session.complete(self.graph, {"passage": text})
            if not res.ok:
                return None, f"{res.error_kind}: {res.error}"
            out = res.output
            ents = [e.name for e in out.entities]  # type: ignore[union-attr]
            triples = [[r.source, r.description or "related to", r.target] for r in out.relations]  # type: ignore[union-attr]
            return {"extracted_entities": ents, "extracted_triples": triples,
                    "graphrag": out.model_dump()}, None  # type: ignore[union-attr]
        ner = await session.complete(self.ner, {"passage": text})
        if not ner.ok:
            return None, f"ner {ner.error_kind}: {ner.error}"
        entities = list(ner.value)
        tri = await session.complete(self.triples, {"passage": text, "named_entities": entities})
        if not tri.ok:
            return None, f"triples {tri.error_kind}: {tri.error}"
        return {"extracted_entities": entities, "extracted_triples": [list(t) for t in tri.value]}, None

    def run(
        self,
        passages: Sequence[Any],
        *,
        output_path: str | Path | None = None,
        checkpoint_path: str | Path | None = None,
    ) -> tuple[list[dict[str, Any]], OpenIEReport]:
        texts = [passage_string(p) for p in passages]
        digests = [text_digest(t, length=16) for t in texts]  # what a checkpoint line is valid for
        if checkpoint_path is None and output_path is not None:
            checkpoint_path = str(output_path) + ".ckpt.jsonl"
        ckpt = Path(checkpoint_path) if checkpoint_path else None
        done = read_checkpoint(ckpt, digests) if ckpt else {}
        todo = [i for i in range(len(texts)) if i not in done]
        report = OpenIEReport(total=len(texts), resumed=len(done), extracted=0,
                              output_path=str(output_path) if output_path else None,
                              checkpoint_path=str(ckpt) if ckpt else None)
        if done:
            log.info("openie: %d/%d passages already in %s; %d to go", len(done), len(texts), ckpt, len(todo))
        if todo:
            self._extract(texts, digests, todo, done, ckpt, report)
            # a dead endpoint or a model that cannot do the task: no file of empty extractions to build a graph on
            stop_if_nothing_succeeded(f"OpenIE ({self.style})", failed=len(report.failures), succeeded=len(done),
                                      first_error=next(iter(report.failures.values()), None), llm=self.llm,
                                      unit="passages")
        docs = []
        for i, text in enumerate(texts):
            rec = done.get(i, {})
            doc = {"idx": i, "passage": text, "extracted_entities": rec.get("extracted_entities", []),
                   "extracted_triples": rec.get("extracted_triples", [])}
            if "graphrag" in rec:
                doc["graphrag"] = rec["graphrag"]
            docs.append(doc)
        report.failed = sorted(report.failures)
        if output_path is not None:
            write_openie(output_path, docs, model=getattr(self.llm, "model", None), failed=report.failed,
                         style=self.style)
        return docs, report

    def _extract(self, texts: list[str], digests: list[str], todo: list[int], done: dict[int, dict[str, Any]],
                 ckpt: Path | None, report: OpenIEReport) -> None:
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), initial=len(done), desc=f"openie ({self.style})", unit="passage")
        fh = None
        if ckpt is not None:
            ckpt.parent.mkdir(parents=True, exist_ok=True)
            fh = open(ckpt, "a", encoding="utf-8")  # noqa: SIM115 - closed below

        async def one(session: Any, i: int) -> None:
            rec, err = await self.extract_one(session, texts[i])
            if rec is None:
                report.failures[i] = err or "failed"
            else:
                rec = {"idx": i, "digest": digests[i], **rec}
                done[i] = rec
                report.extracted += 1
                if fh is not None:  # durable before the passage counts as done (SIGKILL-safe)
                    append_durably(fh, [json.dumps(rec, ensure_ascii=False)])
            if bar is not None:
                bar.update(1)

        async def workflow(session: Any) -> None:
            import asyncio

            await asyncio.gather(*(one(session, i) for i in todo))

        try:
            self.llm.run(workflow)
        finally:
            if fh is not None:
                fh.close()
            if bar is not None:
                bar.close()


def write_openie(path: str | Path, docs: list[dict[str, Any]], *, model: str | None = None,
                 failed: list[int] | None = None, style: str = "hipporag", **fields: Any) -> None:
    """Write the HippoRAG-format OpenIE file atomically (temp file + rename; the folder is created).

    Args:
        path: the file.
        docs: one record per passage (``idx``, ``passage``, ``extracted_entities``, ``extracted_triples``...).
        model: who extracted them; ``style``: how (``hipporag``, ``graphrag``, ``spacy-<design>``...).
        failed: positions without a valid extraction.
        fields: more top-level fields (the spaCy stand-in's ``source`` and ``settings``).
    """
    ents = [e for d in docs for e in d["extracted_entities"]]
    data = {
        "docs": docs,
        "ents_by_doc": [d["extracted_entities"] for d in docs],
        "avg_ent_chars": (sum(len(e) for e in ents) / len(ents)) if ents else 0.0,
        "avg_ent_words": (sum(len(e.split()) for e in ents) / len(ents)) if ents else 0.0,
        "model": model,
        "style": style,
        "failed_idx": failed or [],
        **fields,
    }
    atomic_write_text(path, json.dumps(data, ensure_ascii=False))


def merge_openie(extracted: str | Path, fallback: str | Path, failed: list[int]) -> Path:
    """An OpenIE file with the LLM's records, and the ``fallback`` file's records at the ``failed`` positions
    (written beside ``extracted`` as ``*.merged.json``; both files are aligned with the corpus)."""
    ours = json.loads(Path(extracted).read_text(encoding="utf-8"))
    theirs = json.loads(Path(fallback).read_text(encoding="utf-8"))
    docs, other = ours["docs"], theirs["docs"] if isinstance(theirs, dict) else theirs
    for i in failed:
        if i < len(other):
            docs[i] = {**other[i], "idx": i, "fallback": "dataset openie"}
    out = Path(str(extracted).removesuffix(".json") + ".merged.json")
    write_openie(out, docs, model=ours.get("model"), failed=[], style="graphrag+file")
    return out


def graphrag_openie(dataset: Dataset, llm: LanguageModel, openie_dir: str | Path) -> tuple[Path, OpenIEReport]:
    """HugRAG's GraphRAG-style extraction of ``dataset``'s corpus (resumable, cached under ``openie_dir``), which
    becomes ``dataset.openie_path``: a passage the LLM could not extract keeps the dataset's own record
    (:func:`merge_openie`); when every passage failed, the dataset's file stays. Returns the extraction's own
    file and its report."""
    path, report = index_corpus(dataset.corpus.passages, llm, openie_dir, style="graphrag")
    n, used = len(dataset.corpus), Path(path)
    if report.failed and len(report.failed) < n and dataset.openie_path is not None:
        used = merge_openie(path, dataset.openie_path, report.failed)
    if len(report.failed) < n or dataset.openie_path is None:
        dataset.openie_path = used
    return Path(path), report


def estimate_openie(passages: Sequence[Any], llm: LanguageModel, *, style: str = "hipporag") -> list[Any]:
    """Dry run: per task, the requests and approximate tokens OpenIE over ``passages`` would need.

    The triple step's prompts depend on NER output, so its estimate uses an empty entity list
    (slightly low on prompt tokens); cached calls are excluded when the model name is known.
    """
    texts = [passage_string(p) for p in passages]
    if style == "graphrag":
        return [llm.estimate(GraphExtraction(), [{"passage": t} for t in texts])]
    return [llm.estimate(NamedEntityExtraction(), [{"passage": t} for t in texts]),
            llm.estimate(TripleExtraction(), [{"passage": t, "named_entities": []} for t in texts])]


def openie_file_name(passages: Sequence[Any], model: str | None, style: str = "hipporag") -> str:
    """A file name that changes with the corpus, the model, the style and the task schemas."""
    tasks = [GraphExtraction().key] if style == "graphrag" else [NamedEntityExtraction().key, TripleExtraction().key]
    h = Hasher()
    for part in [style, str(model), *tasks, *(text_digest(passage_string(p), length=16) for p in passages)]:
        h.update(part).update(b"\0")
    slug = "".join(c if c.isalnum() or c in "-." else "_" for c in str(model))[:48]
    return f"openie_{style}_{slug}_{h.hexdigest(12)}.json"


def index_corpus(
    passages: Sequence[Any], llm: LanguageModel, out_dir: str | Path, *, style: str = "hipporag",
    progress: bool = True
) -> tuple[Path, OpenIEReport]:
    """OpenIE file for ``passages`` under ``out_dir``, reusing a finished one (zero requests).

    Returns the path (feed it to :func:`hyperrag.data.openie.read_openie`) and the run's report.
    """
    llm.start()
    path = Path(out_dir) / openie_file_name(passages, getattr(llm, "model", None), style)
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if len(data.get("docs", [])) == len(passages) and not data.get("failed_idx"):
                log.info("openie: reusing %s", path)
                return path, OpenIEReport(total=len(passages), resumed=len(passages), extracted=0,
                                          output_path=str(path))
        except ValueError:
            pass
    report = run_openie(passages, llm, output_path=path, style=style, progress=progress)
    return path, report


def run_openie(
    passages: Sequence[Any],
    llm: LanguageModel,
    *,
    output_path: str | Path | None = None,
    checkpoint_path: str | Path | None = None,
    style: str = "hipporag",
    progress: bool = True,
) -> OpenIEReport:
    """Extract entities and triples for ``passages`` (Passages, mappings with title/text, or strings).

    Resumable through ``checkpoint_path`` (default ``output_path + ".ckpt.jsonl"``); writes
    ``output_path`` in the HippoRAG OpenIE format when given. Failed passages get empty lists in the
    file, are listed in ``failed_idx`` and are retried on the next run.
    """
    _, report = OpenIEIndexer(llm, style=style, progress=progress).run(
        passages, output_path=output_path, checkpoint_path=checkpoint_path)
    return report
