import json

import pytest

from hyperrag.data import sample_dataset
from hyperrag.index.kg_index import graph_settings, load_kg_directory, load_or_build_kg_index
from hyperrag.index.store import IndexCorruptError

GRAPH = graph_settings()  # hydra_configs/graph/default.yaml


def test_index_is_built_once_and_verified(tmp_path, encoder):
    ds = sample_dataset()
    first = load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path)
    assert first.built
    manifest = json.loads((first.directory / "manifest.json").read_text())
    assert manifest["format_version"] == 2
    assert set(manifest["files"]) == {"graph.pt", "graph.json", "embeddings.pt", "provenance.pt", "passages.jsonl"}
    assert manifest["files"]["embeddings.pt"]["stage"] == "embeddings" and manifest["files"]["graph.pt"]["bytes"] > 0
    assert manifest["settings"]["synonym_threshold"] == 0.8 and "openie" in manifest["inputs"]
    encoded = encoder.encoded_count
    second = load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path)
    assert not second.built and second.directory == first.directory
    assert encoder.encoded_count == encoded, "a rerun must not encode anything"
    assert second.graph.entity_names == first.graph.entity_names and second.provenance is not None
    # different settings → a different index directory
    other = load_or_build_kg_index(ds, encoder, graph_settings(synonym_threshold=0.9), root=tmp_path)
    assert other.built and other.directory != first.directory


@pytest.mark.parametrize("name, damage, expected", [
    ("graph.json", lambda p: p.write_bytes(p.read_bytes().replace(b"curie", b"cUrie", 1)), "checksum differs"),
    ("graph.json", lambda p: p.open("a").write(" "), "longer than recorded"),
    ("graph.pt", lambda p: p.write_bytes(p.read_bytes()[:100]), "truncated"),
    ("embeddings.pt", lambda p: p.unlink(), "missing"),
    ("provenance.pt", lambda p: p.write_bytes(b"\0" * p.stat().st_size), "checksum differs"),
])
def test_corrupted_index_is_detected_and_rebuilt(tmp_path, encoder, name, damage, expected):
    ds = sample_dataset()
    built = load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path)
    damage(built.directory / name)
    stage = "embeddings" if name == "embeddings.pt" else "graph"
    with pytest.raises(IndexCorruptError, match=expected) as info:
        load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path, on_corrupt="raise")
    line = str(info.value)
    assert "\n" not in line and name in line and f"rerun stage '{stage}'" in line and info.value.stage == stage
    with pytest.raises(IndexCorruptError, match=expected):
        load_kg_directory(built.directory)
    encoded = encoder.encoded_count
    again = load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path)  # default: rebuild, from cached embeddings
    assert again.built and encoder.encoded_count == encoded
    assert again.graph.entity_names == built.graph.entity_names
    assert not load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path).built


def test_unreadable_manifest_means_rebuild(tmp_path, encoder):
    ds = sample_dataset()
    built = load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path)
    (built.directory / "manifest.json").write_text('{"format_version": 2, "ke')
    assert load_or_build_kg_index(ds, encoder, GRAPH, root=tmp_path).built
