"""Dataset factories — the ``_target_`` of every ``hydra_configs/data/*.yaml``."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from hyperrag.data.hipporag2_release import read_hipporag2_release
from hyperrag.data.hotpotqa import read_hotpotqa
from hyperrag.data.hover import read_hover
from hyperrag.data.jsonl import read_jsonl_corpus, read_jsonl_queries
from hyperrag.data.multiple_choice import read_multiple_choice
from hyperrag.data.musique import read_musique_dir
from hyperrag.data.types import Dataset
from hyperrag.errors import InputError


def sample_dir() -> Path:
    """Folder of the bundled sample corpus (12 passages, 6 multi-hop questions, hand-written OpenIE)."""
    return Path(str(resources.files("hyperrag") / "sample_data"))


def jsonl_dataset(corpus: str | Path, queries: str | Path, openie: str | Path | None = None,
                  name: str = "jsonl") -> Dataset:
    corpus_records = read_jsonl_corpus(corpus)
    query_records = read_jsonl_queries(queries, corpus_records)
    openie_path = Path(openie) if openie else None
    if openie_path is not None and not openie_path.is_file():
        raise InputError("OpenIE file not found", path=openie_path)
    return Dataset(name, corpus_records, query_records, openie_path)


def sample_dataset(name: str = "sample", openie_source: str = "file") -> Dataset:
    """Args:
        openie_source: ``file`` = the hand-written triples; ``llm`` = extract them with the configured LLM
            (the main job does), falling back to the hand-written file when there is no LLM.
    """
    folder = sample_dir()
    dataset = jsonl_dataset(folder / "corpus.jsonl", folder / "queries.jsonl",
                            folder / "openie_handwritten.json", name=name)
    dataset.openie_source = openie_source
    return dataset


def sample_documents(with_triples: bool = True) -> list[dict[str, Any]]:
    """The bundled sample as document records ``{"id", "title", "text"}`` (the Python API's input), with their
    hand-written OpenIE ``triples`` unless ``with_triples=False``."""
    from hyperrag.data.openie import read_openie

    ds = sample_dataset()
    openie = read_openie(ds.openie_path, ds.corpus) if with_triples else None
    docs: list[dict[str, Any]] = []
    for i, p in enumerate(ds.corpus.passages):
        doc: dict[str, Any] = {"id": p.id, "title": p.title, "text": p.text}
        if openie is not None:
            doc["triples"] = [list(t) for t in openie.triples[i]]
        docs.append(doc)
    return docs


def musique_dataset(dir: str | Path, name: str = "musique") -> Dataset:
    return read_musique_dir(dir, name=name)


def hipporag2_release_dataset(dir: str | Path, name: str, openie: str | Path | None = None) -> Dataset:
    """``<dir>/<name>.json`` + ``<dir>/<name>_corpus.json`` of the HippoRAG 2 release."""
    return read_hipporag2_release(dir, name, openie)


def hotpotqa_dataset(path: str | Path, name: str = "hotpotqa") -> Dataset:
    """One HotpotQA file; the corpus is its questions' context paragraphs."""
    return read_hotpotqa(path, name)


def hover_dataset(claims: str | Path, corpus: str | Path, label_options: bool, name: str = "hover") -> Dataset:
    """HoVer claims with a separate title/text corpus."""
    return read_hover(claims, corpus, name, label_options=label_options)


def multiple_choice_dataset(queries: str | Path, cop_base: int, corpus: str | Path | None = None,
                            name: str = "multiple_choice") -> Dataset:
    """Multiple-choice questions (CosmosQA, MedQA, MedMCQA, generic); passages from ``corpus`` and/or contexts."""
    return read_multiple_choice(queries, corpus, name, cop_base=cop_base)
