"""A model server we start as a subprocess: spawn, wait for health, stop (also at interpreter exit).

Used by the ``local`` (llama-cpp-python) and ``vllm`` backends. The server's output goes to a log
file whose tail is quoted when it fails to come up.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hyperrag.llm.errors import ServerStartError

log = logging.getLogger(__name__)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "<no log>"



def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: SIGTERM this process when its parent dies, even by SIGKILL (``atexit`` never runs then)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def spawn_tied_to_parent(cmd: list[str], **popen_kwargs) -> subprocess.Popen:  # type: ignore[no-untyped-def]
    """Start ``cmd`` in its own process group (so :meth:`ManagedServer.stop` can signal the whole group) that
    does not outlive this process: a server left behind by a killed run would hold its port and memory."""
    preexec = _die_with_parent if sys.platform.startswith("linux") else None
    return subprocess.Popen(cmd, start_new_session=True, preexec_fn=preexec, **popen_kwargs)  # noqa: PLW1509

class ManagedServer:
    """An OpenAI-compatible server process on ``host:port``.

    Args:
        cmd: the full command line.
        host / port: where it listens (``base_url`` is ``http://host:port/v1``).
        name: for logs and errors.
        startup_timeout_s: how long to wait for ``GET /v1/models`` to answer 200.
        log_path: file for the server's stdout/stderr (a temp file by default).
        env: extra environment variables.
    """

    def __init__(
        self,
        cmd: list[str],
        *,
        host: str,
        port: int,
        name: str,
        startup_timeout_s: float = 120.0,
        log_path: str | Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.cmd = cmd
        self.host = host
        self.port = port
        self.name = name
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path else Path(tempfile.gettempdir()) / f"hyperrag-{name}-{port}.log"
        self.env = env or {}
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        if self.running:
            return
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log.info("starting %s: %s (log: %s)", self.name, " ".join(self.cmd), self.log_path)
        with open(self.log_path, "wb") as out:
            self.proc = spawn_tied_to_parent(
                self.cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env},
            )
        atexit.register(self.stop)
        try:
            self.wait_healthy()
        except BaseException:
            self.stop()
            raise

    def wait_healthy(self) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        while True:
            assert self.proc is not None
            code = self.proc.poll()
            if code is not None:
                raise ServerStartError(f"{self.name} exited with code {code} before becoming healthy; "
                                       f"log {self.log_path}:\n{_tail(self.log_path)}")
            try:
                if httpx.get(url, timeout=2.0).status_code == 200:
                    log.info("%s healthy at %s", self.name, self.base_url)
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise ServerStartError(f"{self.name} not healthy after {self.startup_timeout_s:.0f}s at {url}; "
                                       f"log {self.log_path}:\n{_tail(self.log_path)}")
            time.sleep(0.25)

    def stop(self, grace_s: float = 10.0) -> None:
        """Terminate the server (its own process group), then kill it if it lingers."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        atexit.unregister(self.stop)
        if proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                return
            try:
                proc.wait(timeout=wait)
                log.info("%s stopped", self.name)
                return
            except subprocess.TimeoutExpired:
                continue
