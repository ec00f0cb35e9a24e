"""The papers' datasets, read from one directory (``paper_data=DIR``) in the layouts they are downloaded in.

Every paper-table experiment (``experiment=*_table``) names its datasets; each is found under ``paper_data`` by the
file names below, read by the reader of its layout, and its OpenIE triples are taken from a released extraction
when one is there (HippoRAG 2's ``openie_results_ner_<model>.json`` keyed by ``chunk-<md5>``, or HippoRAG v1's
positional layout), else extracted with the configured LLM (resumable, cached). ``docs/reproduce.md`` lists, per
paper and table, the files each needs and where they are published.

    ds = paper_dataset("../shared/data/paper_format", "musique")    # musique.json + musique_corpus.json + OpenIE
    missing_line("/data/papers", "hover")                          # one line: which files to put where
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hyperrag.data.holisqa_release import DOMAINS, RELEASE_FILES
from hyperrag.data.types import Dataset
from hyperrag.errors import InputError

if TYPE_CHECKING:
    from hyperrag.index.chunking import ChunkSettings

log = logging.getLogger(__name__)

HIPPORAG2_RELEASE = ("HippoRAG 2 release (OSU-NLP-Group/HippoRAG, reproduce/dataset; also the osunlp/HippoRAG_2 "
                     "dataset on Hugging Face)")


#: HolisQA's five domains (HugRAG Table 3), named as hyperrag/reporting/published/hugrag.yaml names them
HOLISQA_DOMAINS = DOMAINS  # hyperrag/data/holisqa_release.py


@dataclass(frozen=True)
class PaperDataset:
    """One dataset of the papers' tables: its files under ``paper_data`` and how they are read.

    Attributes:
        name: the dataset's name in configs, reports and the published-number files.
        files: the files (a trailing ``/``: a directory) it needs, relative to ``paper_data``.
        layout: the reader: ``hipporag2_release`` (``<name>.json`` + ``<name>_corpus.json``),
            ``multiple_choice`` (``<name>.jsonl``: questions with options, passages in the records or a corpus),
            ``msmarco`` (:mod:`hyperrag.data.msmarco`), ``qasc`` (:mod:`hyperrag.data.qasc`), ``jsonl``.
            ``adversarialqa`` (SQuAD-format JSON), ``medqa`` (the release's questions + its English textbooks as
            the corpus), ``medmcqa`` (the release's dev split + its train split's explanations as the corpus).
        source: where the files are published.
        papers: the papers whose tables use it.
            ``holisqa_release`` (HolisQA as released: ``<domain>/all_abstracts.txt``, ``sentences.jsonl``,
            ``articles.jsonl``, ``qa.jsonl``; :mod:`hyperrag.data.holisqa_release`).
        reader_issue: set when no reader exists yet (the line names the issue that adds it).
        alternates: other ``(layout, files)`` it may be found in, tried in order when ``files`` are not all there
            (HolisQA's domains: the release under ``paper_data/<domain>/`` — ``paper_data`` the folder holding the
            five domain folders — or under ``paper_data/holisqa/<domain>/``, or the project's generated layout).
    """

    name: str
    files: tuple[str, ...]
    layout: str
    source: str
    papers: tuple[str, ...]
    reader_issue: str | None = None
    alternates: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def options(self) -> list[tuple[str, tuple[str, ...]]]:
        """Every ``(layout, files)`` it may be read from, preferred first."""
        return [(self.layout, self.files), *self.alternates]


#: the release files of a HolisQA domain folder (hyperrag/data/holisqa_release.py)
HOLISQA_RELEASE_FILES = RELEASE_FILES


def _holisqa_domain(domain: str) -> PaperDataset:
    release = tuple(f"{domain}/{f}" for f in HOLISQA_RELEASE_FILES)
    return PaperDataset(
        f"holisqa_{domain}", release, "holisqa_release",
        f"HolisQA-{domain} (HugRAG Table 3) as its authors released it (paper_data = the folder holding the five "
        f"domain folders, or one holding holisqa/{domain}/); else python -m hyperrag.holisqa over 2025 "
        f"{domain.replace('_', ' ')} papers in holisqa/{domain}/{{queries,corpus}}.jsonl, labelled as such",
        ("HugRAG",),
        alternates=(("holisqa_release", tuple(f"holisqa/{f}" for f in release)),
                    ("jsonl", (f"holisqa/{domain}/queries.jsonl", f"holisqa/{domain}/corpus.jsonl"))))


def _release(name: str, papers: tuple[str, ...], source: str = HIPPORAG2_RELEASE) -> PaperDataset:
    return PaperDataset(name, (f"{name}.json", f"{name}_corpus.json"), "hipporag2_release", source, papers)


PAPER_DATASETS: dict[str, PaperDataset] = {d.name: d for d in (
    _release("musique", ("HippoRAG 2", "CatRAG", "HyperRAG")),
    _release("2wikimultihopqa", ("HippoRAG 2", "CatRAG", "HyperRAG", "HugRAG")),
    _release("hotpotqa", ("HippoRAG 2", "CatRAG", "HyperRAG", "HugRAG")),
    _release("nq", ("HippoRAG 2", "HugRAG")),
    _release("popqa", ("HippoRAG 2",)),
    # CatRAG's HoVer subset (1,000 claims, 9,440 passages) in the HippoRAG 2 release layout
    _release("hover", ("CatRAG",), "kwunhang/CatRAG, reproduce/dataset/hover.json + hover_corpus.json"),
    PaperDataset("cosmosqa", ("cosmosqa.jsonl",), "multiple_choice",
                 "CosmosQA (Huang et al., 2019; allenai, the Hugging Face 'cosmos_qa' validation split as JSONL: "
                 "context, question, answer0-answer3, label); its contexts are the corpus", ("CDF-RAG",)),
    PaperDataset("medqa", ("medqa/questions/US/test.jsonl", "medqa/textbooks/en/"), "medqa",
                 "MedQA-USMLE (Jin et al., 2021; jind11/MedQA, the data_clean folder of its release: "
                 "questions/US/test.jsonl, and textbooks/en/*.txt — the 18 English textbooks shipped as MedQA's "
                 "retrieval corpus, chunked into passages)", ("CDF-RAG",)),
    PaperDataset("medmcqa", ("medmcqa/dev.json", "medmcqa/train.json"), "medmcqa",
                 "MedMCQA (Pal et al., 2022; medmcqa/medmcqa release: dev.json scored, the expert explanations "
                 "('exp') of train.json as the corpus)", ("CDF-RAG",)),
    PaperDataset("adversarialqa", ("adversarialqa/combined/dev.json",), "adversarialqa",
                 "AdversarialQA (Bartolo et al., 2020; adversarialQA_data.zip from adversarialqa.github.io, "
                 "combined/dev.json: SQuAD-format data/paragraphs/qas; its paragraphs are the corpus)", ("CDF-RAG",)),
    PaperDataset("msmarco", ("msmarco.json",), "msmarco",
                 "MS MARCO QnA v2.1 (Bajaj et al., 2018; microsoft/MSMARCO-Question-Answering, dev_v2.1.json or a "
                 "sample of its rows; the corpus is the passages given with the questions)", ("HugRAG",)),
    PaperDataset("qasc", ("qasc.jsonl",), "qasc",
                 "QASC (Khot et al., 2020; allenai, QASC_Dataset/dev.jsonl; the corpus is the questions' facts)",
                 ("HugRAG",)),
    PaperDataset("holisqa", ("holisqa/queries.jsonl", "holisqa/corpus.jsonl"), "jsonl",
                 "HolisQA (HugRAG; where its release is not available, the output of python -m hyperrag.holisqa, "
                 "labelled as such)", ("HugRAG",)),
    *(_holisqa_domain(domain) for domain in HOLISQA_DOMAINS),
)}


def known(name: str) -> PaperDataset:
    if name not in PAPER_DATASETS:
        raise InputError(f"unknown paper dataset {name!r}; known: {', '.join(PAPER_DATASETS)}", field="data.name")
    return PAPER_DATASETS[name]


def present(paper_data: str | Path | None, name: str) -> bool:
    """Whether every file ``name`` needs is under ``paper_data`` (and it has a reader)."""
    return _found(paper_data, name) is not None


def _found(paper_data: str | Path | None, name: str) -> tuple[str, tuple[str, ...]] | None:
    """The first ``(layout, files)`` of ``name`` whose files are all under ``paper_data``."""
    spec = known(name)
    if paper_data is None or spec.reader_issue is not None:
        return None
    return next((o for o in spec.options() if all(_exists(Path(paper_data), f) for f in o[1])), None)


def _exists(root: Path, name: str) -> bool:
    return (root / name).is_dir() if name.endswith("/") else (root / name).is_file()


def missing_line(paper_data: str | Path | None, name: str) -> str:
    """One line: what ``name`` needs that ``paper_data`` lacks, and where it is published."""
    spec = known(name)
    if spec.reader_issue is not None:
        return f"{name}: no reader yet ({spec.reader_issue}); its files would be {', '.join(spec.files)} ({spec.source})"
    where = Path(paper_data) if paper_data is not None else Path("<paper_data>")
    lacking = [f for f in spec.files if not _exists(where, f)]
    others = "".join(f" (or {' + '.join(files)})" for _, files in spec.alternates)
    return f"{name}: put {' + '.join(lacking)} under {where}/{others} (from {spec.source})"


def find_openie(paper_data: str | Path, name: str) -> Path | None:
    """A released OpenIE extraction for ``name`` under ``paper_data``: ``<name>/openie_results_ner_*.json``
    (HippoRAG 2's output folder per dataset), ``<name>_openie*.json``, else a top-level
    ``openie_results_ner_*.json`` whose chunk ids belong to this dataset's corpus; ``None`` when there is none."""
    root = Path(paper_data)
    for pattern in (f"{name}/openie_results_ner_*.json", f"{name}_openie*.json"):
        found = sorted(root.glob(pattern))
        if found:
            return found[0]
    candidates = sorted(root.glob("openie_results_ner_*.json"))
    if not candidates:
        return None
    corpus_file = root / f"{name}_corpus.json"
    if not corpus_file.is_file():
        return None
    from hyperrag.data.musique import load_json
    from hyperrag.data.openie import chunk_id

    passages = load_json(corpus_file)
    ids = {chunk_id(str(p.get("title", "")), str(p.get("text", ""))) for p in passages if isinstance(p, dict)}
    for path in candidates:
        data = load_json(path)
        docs = data.get("docs", []) if isinstance(data, dict) else []
        if docs and isinstance(docs[0], dict) and docs[0].get("idx") in ids:
            return path
    return None


def paper_dataset(dir: str | Path | None, name: str, openie: str | Path | None = "auto",
                  chunk_words: int | None = None, chunking: ChunkSettings | None = None,
                  cache_dir: str | Path | None = None) -> Dataset:
    """Read the paper dataset ``name`` from the ``paper_data`` directory ``dir``.

    Args:
        dir: the ``paper_data`` directory.
        name: a key of :data:`PAPER_DATASETS`.
        openie: ``auto`` (a released extraction found by :func:`find_openie`, else none: the configured LLM
            extracts), a file, or ``null`` (always extract with the LLM).
        chunk_words: words per passage at most when a textbook corpus is cut into passages (MedQA;
            ``data/paper.yaml``).
        chunking: how HolisQA's abstracts are cut into passages (``chunking/``; ``data/paper.yaml``).
        cache_dir: where HolisQA's chunking is cached.

    Raises:
        InputError: ``paper_data`` unset, or the dataset's files are missing (the message is :func:`missing_line`).
    """
    if dir is None:
        raise InputError("set paper_data=DIR: the directory holding the papers' dataset files (docs/reproduce.md)",
                         field="paper_data")
    spec = known(name)
    found = _found(dir, name)
    if found is None:
        raise InputError(missing_line(dir, name), field="paper_data")
    layout, files = found
    root = Path(dir)
    openie_path = find_openie(root, name) if openie == "auto" else (Path(openie) if openie else None)
    if layout == "holisqa_release":
        from hyperrag.data.holisqa_release import read_holisqa_release

        if chunking is None:
            raise InputError("set data.chunking (how HolisQA's abstracts become passages: chunking/)",
                             setting="data.chunking")
        folder = (root / files[0]).parent
        dataset = read_holisqa_release(folder.parent, folder.name, chunking, cache_dir, name=name)
    elif layout == "hipporag2_release":
        from hyperrag.data.hipporag2_release import read_hipporag2_release

        dataset = read_hipporag2_release(root, name, openie_path)
    elif layout == "multiple_choice":
        from hyperrag.data.datasets import multiple_choice_dataset

        corpus = next((root / f for f in spec.files[1:]), None)
        dataset = multiple_choice_dataset(root / spec.files[0], cop_base=0, corpus=corpus, name=name)
    elif layout == "adversarialqa":
        from hyperrag.data.adversarialqa import read_adversarialqa

        dataset = read_adversarialqa(root / spec.files[0], name=name)
    elif layout == "medqa":
        from hyperrag.data.medical import textbook_corpus
        from hyperrag.data.multiple_choice import read_multiple_choice

        if chunk_words is None:
            raise InputError("set data.chunk_words (words per textbook passage)", setting="data.chunk_words")
        dataset = read_multiple_choice(root / spec.files[0], textbook_corpus(root / spec.files[1], chunk_words),
                                       name, cop_base=0)
    elif layout == "medmcqa":
        from hyperrag.data.medical import explanation_corpus
        from hyperrag.data.multiple_choice import read_multiple_choice

        # the release numbers the correct option 1-4 (cop)
        dataset = read_multiple_choice(root / spec.files[0], explanation_corpus(root / spec.files[1]), name,
                                       cop_base=1)
    elif layout == "msmarco":
        from hyperrag.data.msmarco import read_msmarco

        dataset = read_msmarco(root / spec.files[0], name=name)
        dataset.openie_path = openie_path
    elif layout == "qasc":
        from hyperrag.data.qasc import read_qasc

        dataset = read_qasc(root / spec.files[0], name=name)
        dataset.openie_path = openie_path
    elif layout == "jsonl":
        from hyperrag.data.datasets import jsonl_dataset

        dataset = jsonl_dataset(root / files[1], root / files[0], openie_path, name=name)
    else:  # pragma: no cover - guarded by reader_issue
        raise InputError(missing_line(dir, name), field="data.name")
    if openie_path is None:
        log.info("%s: no released OpenIE file under %s; the configured LLM extracts the triples", name, root)
    return dataset
