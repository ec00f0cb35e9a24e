"""The command-line entries inside the package run from a wheel installed in a fresh venv.

The wheel is built from the checkout as git sees it — every tracked or unignored file, uncommitted changes
included, symlinks kept as symlinks (``hyperrag/conf`` → ``../hydra_configs``), copied to a temporary folder so
the build's ``build/`` and ``*.egg-info`` never land in the checkout — and installed into a venv that sees the
system's packages (torch & co. are not reinstalled) but not the source tree: the commands run from an empty
folder without ``PYTHONPATH``, and the test checks that ``hyperrag`` is imported from the venv. Configs
(``hydra_configs``, packaged through the ``hyperrag/conf`` link) and the sample data (``hyperrag/sample_data``)
come from the installed package; the wheel holds every config file of the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.llm.fake_server import FakeOpenAIServer

pytestmark = pytest.mark.slow


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def checkout_copy(dest: Path) -> Path:
    """The files git sees in the checkout (tracked, or new and not ignored; as they are on disk) copied to
    ``dest`` with symlinks kept — what ``git clone`` of the working tree would hold."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                            capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.decode().strip()[:200]}")
    for rel in filter(None, listed.stdout.decode().split("\0")):
        path, target = REPO_ROOT / rel, dest / rel
        if not path.is_symlink() and not path.exists():  # deleted in the working tree, not yet committed
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            target.symlink_to(os.readlink(path))
        else:
            shutil.copy2(path, target)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """(venv python, an empty working folder, the environment to run it in)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = checkout_copy(tmp / "src")
    assert (src / "hyperrag" / "conf").is_symlink()  # the checkout's link, not a copy of its files
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", WANDB_MODE="offline",
               HYPERRAG_CACHE=str(tmp / "cache"))
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(src)]
    offline = subprocess.run([*build, "--no-build-isolation"], cwd=tmp, env=env, capture_output=True,
                             text=True, timeout=300, check=False)
    if offline.returncode != 0:  # no usable setuptools here: let pip fetch the build backend
        _run(build, tmp, env)
    wheel = next((tmp / "dist").glob("hyperrag-*.whl"))
    with zipfile.ZipFile(wheel) as packed:
        configs = {n.removeprefix("hyperrag/conf/") for n in packed.namelist() if n.startswith("hyperrag/conf/")}
    expected = {p.relative_to(src / "hydra_configs").as_posix() for p in (src / "hydra_configs").rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    assert configs == expected, sorted(configs ^ expected)
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(tmp / "venv")], tmp, env)
    python = tmp / "venv" / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], tmp, env)
    work = tmp / "work"
    work.mkdir()
    return python, work, env


def test_the_venv_imports_the_installed_wheel_not_the_checkout(installed):
    python, work, env = installed
    code = "import hyperrag, hyperrag.conf; print(hyperrag.__file__); print(hyperrag.conf.CONFIG_DIR)"
    out = _run([str(python), "-c", code], work, env).stdout.split()
    venv = python.parents[1]
    assert Path(out[0]).is_relative_to(venv) and Path(out[1]).is_relative_to(venv), out
    assert (Path(out[1]) / "retrieve.yaml").is_file() and (Path(out[1]) / "method" / "hugrag.yaml").is_file()


@pytest.mark.slow
def test_index_cli_builds_and_refreshes_from_the_installed_package(installed):
    python, work, env = installed
    assert "build" in _run([str(python), "-m", "hyperrag.index", "--help"], work, env).stdout
    code = "from hyperrag.data.datasets import sample_dir; print(sample_dir())"
    sample = Path(_run([str(python), "-c", code], work, env).stdout.strip())
    assert sample.is_relative_to(python.parents[1])
    built = _run([str(python), "-m", "hyperrag.index", "build", "--index", "idx",
                  "--corpus", str(sample / "corpus.jsonl"),
                  "--openie", str(sample / "openie_handwritten.json")], work, env)
    summary = json.loads(built.stdout.strip().splitlines()[-1])
    assert summary["built"] and summary["passages"] == 12 and summary["edges"] > 0
    # refresh composes the packaged retrieve config with method=hugrag and runs its index()
    refreshed = _run([str(python), "-m", "hyperrag.index", "refresh", "--index", "idx", "--method", "hugrag",
                      "llm=none", "hardware=cpu"], work, env)
    out = json.loads(refreshed.stdout.strip().splitlines()[-1])
    assert out["method"] == "hugrag" and out["passages"] == 12 and out["modules"] > 0


def test_holisqa_cli_runs_from_the_installed_package(installed, tmp_path):
    python, work, env = installed
    assert "holisqa" in _run([str(python), "-m", "hyperrag.holisqa", "--help"], work, env).stdout
    with FakeOpenAIServer() as server:  # TEST DOUBLE: schema-valid synthetic replies, not a model
        _run([str(python), "-m", "hyperrag.holisqa", "llm=openai_compatible",
              f"llm.base_url={server.base_url}", "llm.model=fake-model", "llm.api_key_env=null",
              "builder.max_slices=2", f"out={tmp_path / 'hq'}", f"cache_dir={tmp_path / 'cache'}"], work, env)
        assert server.stats["requests"] > 0
    build = json.loads((tmp_path / "hq" / "build.json").read_text())
    assert build["passages"] == 12 and build["slices"] == 2
    assert (tmp_path / "hq" / "corpus.jsonl").read_text().count("\n") == 12
