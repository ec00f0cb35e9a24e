"""Shared fixtures and test decorators (PyG style: onlyCUDA, withPackage)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

from hyperrag.utils.availability import cuda_available, package_available

REPO_ROOT = Path(__file__).resolve().parents[1]


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (benchmarks/ is no package: pysbd ships a top-level ``benchmarks``), its
    sibling modules importable as when it runs as a script, registered in ``sys.modules`` (its dataclasses look it up)."""
    folder = str(REPO_ROOT / "benchmarks")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
SHARED_DATA = Path(os.environ.get("HYPERRAG_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
MUSIQUE_DIR = SHARED_DATA / "musique_dev"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")


def onlyCUDA(func):
    """Run only where a CUDA device is visible (and mark as gpu)."""
    func = pytest.mark.gpu(func)
    return pytest.mark.skipif(not cuda_available(), reason="CUDA not available")(func)


def withPackage(*names: str):
    """Skip unless every named package is importable."""
    missing = [n for n in names if not package_available(n)]
    return pytest.mark.skipif(bool(missing), reason=f"missing packages: {missing}")


def requires_musique(func):
    return pytest.mark.skipif(not MUSIQUE_DIR.exists(), reason=f"{MUSIQUE_DIR} not found")(func)


@pytest.fixture(scope="session")
def encoder(tmp_path_factory):
    """The real MiniLM encoder with a cache shared by the test session (or $HYPERRAG_CACHE when set)."""
    from hyperrag.embedding import TextEncoder

    cache = os.environ.get("HYPERRAG_CACHE") or tmp_path_factory.mktemp("cache")
    return TextEncoder(cache_dir=cache, show_progress=False)
