"""A cache directory shared by this package's tests (embeddings and indexes are built once per session)."""

import os

import pytest


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    return os.environ.get("HYPERRAG_CACHE") or str(tmp_path_factory.mktemp("cache"))
