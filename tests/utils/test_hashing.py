"""hyperrag.utils.hashing: one algorithm, stable keys, and the embedding cache carried over from its SHA-1
keys."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import numpy as np
import torch

from hyperrag.data.types import Passage
from hyperrag.embedding.cache import EmbeddingCache
from hyperrag.utils.hashing import Hasher, file_digest, passage_digest, stable_digest, text_digest


def test_keys_that_index_directories_and_llm_caches_already_hold_do_not_change(tmp_path):
    """Index manifests (settings fingerprints, file checksums) and the LLM response cache were SHA-256
    already: the module reproduces their keys byte for byte, so those caches stay valid."""
    obj = {"inputs": {"corpus": "x"}, "settings": {"k": 1, "path": tmp_path}}
    as_before = hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()
    assert stable_digest(obj) == as_before
    blob = json.dumps({"model": "m", "messages": [{"role": "user", "content": "é"}]}, ensure_ascii=False)
    assert text_digest(blob) == hashlib.sha256(blob.encode("utf-8")).hexdigest()
    f = tmp_path / "f.bin"
    f.write_bytes(bytes(range(256)) * 5000)
    assert file_digest(f, chunk=4096) == hashlib.sha256(f.read_bytes()).hexdigest()


def test_tensors_hash_by_dtype_shape_and_bytes():
    a = torch.arange(6)
    assert stable_digest(a) == stable_digest(torch.arange(6))
    assert stable_digest(a) != stable_digest(a.view(2, 3)) != stable_digest(a.to(torch.int32))
    streamed = Hasher().update(a).update(json.dumps("x").encode()).hexdigest(10)
    assert stable_digest(a, "x", length=10) == streamed
    assert len(stable_digest(a, length=10)) == 10


def test_a_passage_is_hashed_one_way_whatever_holds_it():
    p = Passage("p1", "Title", "Some text.")
    assert passage_digest(p) == passage_digest({"id": "p1", "title": "Title", "text": "Some text."})
    assert passage_digest(p) != passage_digest(Passage("p1", "Title", "Some text!"))
    assert passage_digest(p) != passage_digest(Passage("p2", "Title", "Some text."))
    assert passage_digest(p, length=16) == passage_digest(p)[:16]


def test_embedding_cache_carries_vectors_over_from_its_sha1_keyed_file(tmp_path):
    """A text cached under the old SHA-1 key is returned from the old file, not re-encoded, and copied
    under its new key; a text in neither is a miss."""
    legacy = tmp_path / "old.sqlite"
    db = sqlite3.connect(legacy)
    db.execute("CREATE TABLE vec (key BLOB PRIMARY KEY, v BLOB NOT NULL)")
    vec = np.arange(4, dtype=np.float32)
    db.execute("INSERT INTO vec VALUES (?, ?)", (hashlib.sha1(b"hello").digest(), vec.tobytes()))
    db.commit()
    db.close()
    cache = EmbeddingCache(tmp_path / "new.sqlite", dim=4, legacy_path=legacy)
    found = cache.get_many(["hello", "unseen", "hello"])
    assert sorted(found) == [0, 2] and np.array_equal(found[0], vec) and len(cache) == 1
    cache.close()
    legacy.unlink()  # the new file alone now holds it
    again = EmbeddingCache(tmp_path / "new.sqlite", dim=4, legacy_path=legacy)
    assert np.array_equal(again.get_many(["hello"])[0], vec)
    again.close()
