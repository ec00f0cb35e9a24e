"""Index directories: files plus a manifest (format version, settings, input hashes, file checksums).

Loading verifies the manifest; a directory whose key matches is reused, so a rerun recomputes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class IndexCorruptError(RuntimeError):
    """The index directory exists but does not match its manifest (edited or truncated files)."""


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(obj: Any) -> str:
    """Stable hash of a JSON-serialisable object (settings, input hashes)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


class IndexDirectory:
    """One built index. ``key`` is the fingerprint of everything that determines its content."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def manifest(self) -> dict[str, Any] | None:
        if not self.manifest_path.is_file():
            return None
        try:
            return json.loads(self.manifest_path.read_text())
        except json.JSONDecodeError:
            return None

    def matches(self, key: str) -> bool:
        """True when a complete index with this key is here (checksums verified)."""
        manifest = self.manifest()
        if manifest is None or manifest.get("format_version") != FORMAT_VERSION or manifest.get("key") != key:
            return False
        self.verify(manifest)
        return True

    def verify(self, manifest: dict[str, Any] | None = None) -> None:
        manifest = manifest or self.manifest()
        if manifest is None:
            raise IndexCorruptError(f"{self.manifest_path}: missing or unreadable manifest")
        for name, expected in manifest["files"].items():
            file = self.path / name
            if not file.is_file():
                raise IndexCorruptError(f"{file}: listed in the manifest but missing; delete {self.path} to rebuild")
            if sha256_file(file) != expected:
                raise IndexCorruptError(f"{file}: checksum differs from the manifest; delete {self.path} to rebuild")

    def write_manifest(self, key: str, settings: dict[str, Any], inputs: dict[str, Any], files: list[str],
                       stats: dict[str, Any] | None = None) -> None:
        manifest = {
            "format_version": FORMAT_VERSION,
            "key": key,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "settings": settings,
            "inputs": inputs,
            "files": {name: sha256_file(self.path / name) for name in files},
            "stats": stats or {},
        }
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, default=str))
        os.replace(tmp, self.manifest_path)  # the manifest appears last and atomically: its presence means "complete"
