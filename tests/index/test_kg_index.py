import json

import pytest

from hyperrag.data import sample_dataset
from hyperrag.index.kg_index import GraphSettings, load_or_build_kg_index
from hyperrag.index.store import IndexCorruptError


def test_index_is_built_once_and_verified(tmp_path, encoder):
    ds = sample_dataset()
    first = load_or_build_kg_index(ds, encoder, root=tmp_path)
    assert first.built
    manifest = json.loads((first.directory / "manifest.json").read_text())
    assert manifest["format_version"] == 1 and set(manifest["files"]) == {"graph.pt", "graph.json", "embeddings.pt"}
    assert manifest["settings"]["synonym_threshold"] == 0.8 and "openie" in manifest["inputs"]
    encoded = encoder.encoded_count
    second = load_or_build_kg_index(ds, encoder, root=tmp_path)
    assert not second.built and second.directory == first.directory
    assert encoder.encoded_count == encoded, "a rerun must not encode anything"
    assert second.graph.entity_names == first.graph.entity_names
    # different settings → a different index directory
    other = load_or_build_kg_index(ds, encoder, GraphSettings(synonym_threshold=0.9), root=tmp_path)
    assert other.built and other.directory != first.directory


def test_corrupted_index_is_detected(tmp_path, encoder):
    ds = sample_dataset()
    built = load_or_build_kg_index(ds, encoder, root=tmp_path)
    with (built.directory / "graph.json").open("a") as handle:
        handle.write(" ")
    with pytest.raises(IndexCorruptError, match="checksum differs"):
        load_or_build_kg_index(ds, encoder, root=tmp_path)
