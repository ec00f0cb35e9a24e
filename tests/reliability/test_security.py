"""Security audit as tests: no eval/exec, safe torch.load, servers on 127.0.0.1 by default, keys only from env."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import yaml

from hyperrag.llm import backends
from tests.conftest import REPO_ROOT

SOURCES = sorted((REPO_ROOT / "hyperrag").rglob("*.py")) + [REPO_ROOT / "retrieve.py", REPO_ROOT / "train.py"]


def grep(pattern: str) -> list[str]:
    rx = re.compile(pattern)
    hits = []
    for path in SOURCES:
        if not path.is_file():
            continue
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if rx.search(line.split("#")[0]):
                hits.append(f"{path.relative_to(REPO_ROOT)}:{no}: {line.strip()}")
    return hits


def test_no_eval_or_exec_anywhere():
    assert grep(r"(?<![\w.])(eval|exec)\s*\(") == []
    assert grep(r"\b(pickle|marshal|dill)\.loads?\(|yaml\.load\((?!.*SafeLoader)|shell\s*=\s*True") == []


def test_torch_load_is_weights_only():
    assert [h for h in grep(r"torch\.load\(") if "weights_only=True" not in h] == []


def test_servers_bind_localhost_by_default():
    for cls in (backends.LocalLlamaCppServer, backends.VLLMServer):
        assert inspect.signature(cls.__init__).parameters["host"].default == "127.0.0.1"
    for name in ("local.yaml", "vllm.yaml"):
        cfg = yaml.safe_load((REPO_ROOT / "hyperrag" / "conf" / "llm" / name).read_text())
        assert cfg.get("host", "127.0.0.1") == "127.0.0.1"


def test_api_keys_only_from_the_environment():
    assert "api_key" not in inspect.signature(backends.OpenAICompatible.__init__).parameters
    for path in (REPO_ROOT / "hyperrag" / "conf").rglob("*.yaml"):
        text = path.read_text()
        assert not re.search(r"^\s*api_key\s*:", text, re.MULTILINE), f"{path}: a key in a config file"
        assert not re.search(r"sk-[A-Za-z0-9]{20,}", text), f"{path}: something that looks like a key"
    assert not any(re.search(r"sk-[A-Za-z0-9]{20,}", Path(p).read_text(encoding="utf-8")) for p in SOURCES if p.is_file())
