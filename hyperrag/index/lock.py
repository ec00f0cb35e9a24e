"""One writer per index directory: an OS file lock that build / insert / delete / refresh and the Python API take.

    with index_writer("idx/"):            # waits up to index_lock.timeout_s (hydra_configs/index_lock/), then
        insert_documents("idx/", ...)     # stops with IndexBusyError naming the holder (exit 2 from the CLI)

The lock is :class:`filelock.FileLock` on ``<index>/.writer.lock`` (``fcntl.flock`` on POSIX): the kernel drops it
when the holding process dies, ``kill -9`` included, so a crashed writer never leaves the index locked. Whoever
holds it records its pid, host, command and start time in ``<index>/.writer.lock.json``, which a waiter that gives
up names in its one error line. Nested writers in one process (the API's ``insert`` calling the index's insert)
re-enter the lock they hold; threads of one process take turns.

Readers take no lock and never wait: a generation is published by the atomic rename of ``manifest.json`` (see
:mod:`hyperrag.index.update`), so a reader sees the previous generation or the new one, never half of one; a reader
whose generation is collected under it reads the new one (:meth:`~hyperrag.index.store.IndexDirectory.read_stable`).
The lock files stay in the directory (removing a lock file while another process waits on it would let two
writers in); :func:`clear_index_directory` empties an index for a rebuild around them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperrag.config.validation import NonNegativeFloat, settings
from hyperrag.errors import InputError

LOCK_FILE = ".writer.lock"
HOLDER_FILE = ".writer.lock.json"


@settings
class LockSettings:
    """``hydra_configs/index_lock/default.yaml``.

    Attributes:
        timeout_s: how long a second writer waits for the index's lock before it stops (0: it stops at once).
    """

    timeout_s: NonNegativeFloat


class IndexBusyError(InputError):
    """Another writer held the index's lock for longer than the wait allowed.

    Attributes:
        holder: what the holder recorded (``pid``, ``host``, ``command``, ``since``), or ``{}`` when unknown.
    """

    def __init__(self, directory: Path, waited: float, holder: dict[str, Any]) -> None:
        self.holder = holder
        super().__init__(f"another writer holds this index ({describe_holder(holder)}); waited {waited:g} s "
                         "(index_lock.timeout_s); rerun when it has finished", path=directory)


#: the running command's settings (:func:`use_lock_settings`); ``None``: the YAML's
_RUN_SETTINGS: LockSettings | None = None


def lock_settings() -> LockSettings:
    """The running command's settings (:func:`use_lock_settings`: its composed ``index_lock`` node, command-line
    overrides included), else those of ``hydra_configs/index_lock/default.yaml``."""
    if _RUN_SETTINGS is not None:
        return _RUN_SETTINGS
    from hyperrag.config.compose import configured

    return configured("index_lock", LockSettings)


@contextlib.contextmanager
def use_lock_settings(settings: LockSettings) -> Iterator[LockSettings]:
    """Within the body, a writer given no timeout (``index_writer(dir)``: a retriever building its index inside a
    run) waits ``settings.timeout_s``: a command enters it with its composed ``index_lock`` node, so
    ``retrieve.py ... index_lock.timeout_s=5`` reaches every index the run builds. Restores the previous settings."""
    global _RUN_SETTINGS
    previous, _RUN_SETTINGS = _RUN_SETTINGS, settings
    try:
        yield settings
    finally:
        _RUN_SETTINGS = previous


def describe_holder(holder: dict[str, Any]) -> str:
    """``pid 123 on host h, since 2025-01-01T10:00:00: python -m hyperrag.index insert ...`` (or ``holder
    unknown``); a pid on this host that no longer runs is flagged (the record outlived its writer)."""
    if not holder.get("pid"):
        return "holder unknown"
    pid, host = holder["pid"], holder.get("host", "?")
    text = f"pid {pid} on {host}"
    if host == socket.gethostname() and not _alive(int(pid)):
        text += " (no longer running: its record is stale)"
    if holder.get("since"):
        text += f", since {holder['since']}"
    if holder.get("command"):
        text += f": {holder['command']}"
    return text


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    return True


def read_holder(directory: str | Path) -> dict[str, Any]:
    """What the current (or last) holder of ``directory``'s lock recorded; ``{}`` when nothing readable is there."""
    try:
        data = json.loads((Path(directory) / HOLDER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _command() -> str:
    argv = [Path(sys.argv[0]).name if i == 0 and sys.argv[0] else a for i, a in enumerate(sys.argv)]
    text = " ".join(argv) or "python"
    return text if len(text) <= 200 else text[:197] + "..."


@dataclass
class _Held:
    """This process's hold on one directory's lock: threads take turns on ``turn``; ``depth`` counts re-entries."""

    turn: threading.RLock
    file_lock: Any
    depth: int = 0


_HELD: dict[str, _Held] = {}
_HELD_GUARD = threading.Lock()


def _forget_held() -> None:
    """In a forked child: none of the parent's holds is the child's (the OS lock stays the parent's)."""
    global _HELD_GUARD
    _HELD.clear()
    _HELD_GUARD = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_held)


def _entry(directory: Path) -> _Held:
    from filelock import FileLock

    key = str(directory)
    with _HELD_GUARD:
        if key not in _HELD:
            _HELD[key] = _Held(threading.RLock(), FileLock(str(directory / LOCK_FILE)))
        return _HELD[key]


@contextlib.contextmanager
def index_writer(index: str | Path, timeout: float | None = None, command: str | None = None, *,
                 create: bool = True) -> Iterator[Path]:
    """Hold ``index``'s writer lock for the body.

    Args:
        index: the index directory.
        timeout: seconds to wait for another writer (``None``: ``index_lock.timeout_s``, :func:`lock_settings`).
        command: what the holder record says this writer is (default: this process's command line).
        create: create the folder when missing (a build); else a missing folder is an :class:`InputError`.

    Yields:
        The resolved directory.

    Raises:
        IndexBusyError: another writer held it for ``timeout`` seconds (one line naming the holder).
    """
    from filelock import Timeout

    directory = Path(index).resolve()
    if not create and not directory.is_dir():
        raise InputError("index directory not found (build one with `python -m hyperrag.index build`)",
                         path=index, field="--index")
    directory.mkdir(parents=True, exist_ok=True)
    wait = lock_settings().timeout_s if timeout is None else float(timeout)
    entry = _entry(directory)
    t0 = time.monotonic()
    if not entry.turn.acquire(timeout=wait):  # another thread of this process writes this index
        raise IndexBusyError(directory, wait, read_holder(directory))
    try:
        if entry.depth == 0:
            try:
                entry.file_lock.acquire(timeout=max(0.0, wait - (time.monotonic() - t0)))
            except Timeout:
                raise IndexBusyError(directory, wait, read_holder(directory)) from None
            _write_holder(directory, command)
        entry.depth += 1
        try:
            yield directory
        finally:
            entry.depth -= 1
            if entry.depth == 0:
                (directory / HOLDER_FILE).unlink(missing_ok=True)
                entry.file_lock.release()
    finally:
        entry.turn.release()


def _write_holder(directory: Path, command: str | None) -> None:
    from hyperrag.utils.atomic import atomic_write_json

    atomic_write_json(directory / HOLDER_FILE, {"pid": os.getpid(), "host": socket.gethostname(),
                                                "command": command or _command(),
                                                "since": time.strftime("%Y-%m-%dT%H:%M:%S")})


def index_entries(directory: str | Path) -> list[Path]:
    """The directory's entries apart from the lock's own files (``.writer.lock*``: never part of an index, never
    removed while a writer may wait on them); an empty list: nothing of an index there."""
    path = Path(directory)
    if not path.is_dir():
        return []
    return [p for p in path.iterdir() if not p.name.startswith(LOCK_FILE)]


def clear_index_directory(directory: str | Path) -> None:
    """Remove everything in ``directory`` but the lock's files (a rebuild under the lock; the folder stays)."""
    for entry in index_entries(directory):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink(missing_ok=True)


__all__ = ["HOLDER_FILE", "LOCK_FILE", "IndexBusyError", "LockSettings", "clear_index_directory",
           "describe_holder", "index_entries", "index_writer", "lock_settings", "read_holder",
           "use_lock_settings"]
