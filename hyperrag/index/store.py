"""Index directories: files plus a manifest (format version, settings, input hashes, file checksums).

Every file is written atomically and the manifest last, so its presence means "complete". Loading
verifies the manifest: a missing, truncated, corrupted or mismatched file raises
:class:`IndexCorruptError` with one line naming the file and the stage that must be rerun (callers
whose stage is cheap rebuild it instead). A directory whose key matches is reused, so a rerun
recomputes nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hyperrag.errors import InputError
from hyperrag.utils.atomic import atomic_write_json
from hyperrag.utils.hashing import file_digest

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
T = TypeVar("T")


class IndexCorruptError(InputError):
    """The index directory does not match its manifest (missing, truncated, edited or foreign files).

    Attributes:
        file: the offending file.
        stage: the stage whose rerun rewrites it (e.g. ``graph``).
    """

    def __init__(self, message: str, *, file: str | Path, stage: str, directory: str | Path) -> None:
        self.file = str(file)
        self.stage = stage
        self.directory = str(directory)
        super().__init__(f"{message}; rerun stage '{stage}' (delete {directory} or rerun the command "
                         "that built it)", path=file)


def _entry(value: Any) -> dict[str, Any]:
    """A manifest file entry; format-1 manifests stored the bare checksum."""
    return value if isinstance(value, dict) else {"sha256": value}


class IndexDirectory:
    """One built index. ``key`` is the fingerprint of everything that determines its content.

    Args:
        path: the folder.
        stage: default stage name reported for files without their own (e.g. ``graph``).
    """

    def __init__(self, path: str | Path, stage: str = "index") -> None:
        self.path = Path(path)
        self.stage = stage

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def manifest(self) -> dict[str, Any] | None:
        if not self.manifest_path.is_file():
            return None
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None

    def _manifest_stamp(self) -> tuple[int, int, int] | None:
        """Identity of the manifest file now (a commit renames a new file over it: another inode)."""
        try:
            st = os.stat(self.manifest_path)
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def read_stable(self, read: Callable[[], T], attempts: int = 3) -> T:
        """``read()`` — a reader of the manifest and the files it lists — run again when it failed because a writer
        published a new generation meanwhile (and collected the files the old manifest listed); a failure with the
        manifest unchanged is the index's own and is raised. Readers take no lock (:mod:`hyperrag.index.lock`)."""
        for attempt in range(attempts):
            before = self._manifest_stamp()
            try:
                return read()
            except IndexCorruptError:
                if attempt == attempts - 1 or self._manifest_stamp() == before:
                    raise
        raise AssertionError("unreachable")

    def matches(self, key: str) -> bool:
        """True when a complete index with this key is here (checksums verified, else raises)."""
        manifest = self.manifest()
        if manifest is None or manifest.get("format_version") != FORMAT_VERSION or manifest.get("key") != key:
            return False
        self.verify(manifest)
        return True

    def corrupt(self, name: str, message: str, stage: str | None = None) -> IndexCorruptError:
        return IndexCorruptError(message, file=self.path / name, stage=stage or self.stage, directory=self.path)

    def verify(self, manifest: dict[str, Any] | None = None) -> dict[str, Any]:
        """Check every listed file's presence, size and checksum; return the manifest."""
        manifest = manifest or self.manifest()
        if manifest is None:
            raise self.corrupt(MANIFEST, "missing or unreadable manifest")
        if manifest.get("format_version") != FORMAT_VERSION:
            raise self.corrupt(MANIFEST, f"format version {manifest.get('format_version')!r}, "
                                         f"this version reads {FORMAT_VERSION}")
        for name, value in manifest["files"].items():
            entry = _entry(value)
            stage = entry.get("stage")
            file = self.path / name
            if not file.is_file():
                raise self.corrupt(name, "listed in the manifest but missing", stage)
            size = entry.get("bytes")
            actual = file.stat().st_size
            if size is not None and actual != size:
                kind = "truncated" if actual < size else "longer than recorded"
                raise self.corrupt(name, f"{kind} ({actual} bytes, manifest says {size})", stage)
            if file_digest(file) != entry.get("sha256"):
                raise self.corrupt(name, "checksum differs from the manifest (corrupted or edited)", stage)
        return manifest

    def write_manifest(self, key: str, settings: dict[str, Any], inputs: dict[str, Any],
                       files: list[str] | dict[str, str], stats: dict[str, Any] | None = None,
                       extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """Record the files (a list, or ``{file: stage}``) with checksums; written atomically and last."""
        stages = files if isinstance(files, dict) else {name: self.stage for name in files}
        manifest = {
            "format_version": FORMAT_VERSION,
            "key": key,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "settings": settings,
            "inputs": inputs,
            "files": {name: {"sha256": file_digest(self.path / name), "bytes": (self.path / name).stat().st_size,
                             "stage": stage} for name, stage in stages.items()},
            "stats": stats or {},
            **(extra or {}),
        }
        atomic_write_json(self.manifest_path, manifest)
        return manifest
