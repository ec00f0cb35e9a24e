"""A managed server never outlives the run that started it, even when that run is SIGKILLed."""

import os
import signal
import subprocess
import sys
import time

import pytest

CHILD = """
import sys
from hyperrag.llm.server import spawn_tied_to_parent
proc = spawn_tied_to_parent([sys.executable, "-c", "import time; time.sleep(120)"])
print(proc.pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for its reaper counts as gone
        return f.read().split()[2] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal is Linux-only")
def test_server_process_dies_with_a_killed_parent():
    parent = subprocess.Popen([sys.executable, "-c", "import time\n" + CHILD], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(parent.stdout.readline())
        assert _alive(server_pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server_pid), "the server outlived the SIGKILLed run"
    finally:
        parent.kill()
