"""Reproducibility record of a run: ``run_info.json`` = command, resolved config, every seed, package
versions, git commit (and whether the tree was dirty), Hydra overrides and choices, torch settings."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from hyperrag.utils.hashing import text_digest

PACKAGES = ("hyperrag", "torch", "numpy", "scipy", "lightning", "hydra-core", "omegaconf", "sentence-transformers",
            "transformers", "bm25s", "PyStemmer", "igraph", "leidenalg", "graspologic-native", "geoopt", "pydantic",
            "httpx", "wandb", "matplotlib", "llama-cpp-python", "vllm", "cugraph-cu12")

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the hyperrag package the run imported


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """Installed versions of the packages that shape results (missing ones are left out)."""
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_state(package_dir: str | Path = PACKAGE_DIR) -> dict[str, Any] | None:
    """``{"commit", "branch", "dirty", "diff_sha256"}`` of the checkout holding the code, or ``None``.

    ``None`` too for an installed package (a wheel in site-packages): its files are tracked by no repository,
    even when the environment happens to sit inside one.
    """
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(package_dir), *args], capture_output=True, text=True,
                              timeout=20, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        if not git("ls-files", "--", "__init__.py").strip():
            return None
    except (OSError, subprocess.SubprocessError):
        return None
    state: dict[str, Any] = {"commit": commit}
    try:
        state["branch"] = git("rev-parse", "--abbrev-ref", "HEAD").strip()
        status = git("status", "--porcelain", "--untracked-files=no")
        state["dirty"] = bool(status.strip())
        if state["dirty"]:  # identifies the uncommitted change set the run used
            state["diff_sha256"] = text_digest(git("diff", "HEAD"))
    except (OSError, subprocess.SubprocessError):
        pass
    return state


def find_seeds(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every config key named ``seed`` (or ending in ``_seed``) with its dotted path."""
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if (k == "seed" or str(k).endswith("_seed")) and not isinstance(v, (dict, list)):
                out[path] = v
            else:
                out.update(find_seeds(v, path))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.update(find_seeds(v, f"{prefix}[{i}]"))
    return out


def plain_config(cfg: Any) -> dict[str, Any]:
    """The config as plain data, resolved where possible (``${hydra:...}`` outside a Hydra app is kept)."""
    from omegaconf import DictConfig, OmegaConf

    if not isinstance(cfg, DictConfig):
        return dict(cfg)
    try:
        return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
    except Exception:  # noqa: BLE001 - an unresolvable interpolation: record it unresolved
        return OmegaConf.to_container(cfg, resolve=False)  # type: ignore[return-value]


def hydra_state() -> dict[str, Any] | None:
    """Overrides, group choices, mode, job number and sweep dir of the running Hydra job (if any)."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        if not HydraConfig.initialized():
            return None
        hc = HydraConfig.get()
        multirun = hc.mode == RunMode.MULTIRUN or (hc.mode is None and hc.job.get("num") is not None)
        return {"mode": "MULTIRUN" if multirun else "RUN", "overrides": list(hc.overrides.task),
                "choices": {k: v for k, v in hc.runtime.choices.items() if not str(k).startswith("hydra/")},
                "job_num": hc.job.get("num"), "job_name": hc.job.name,
                "sweep_dir": str(hc.sweep.dir) if multirun else None, "output_dir": hc.runtime.output_dir}
    except Exception:  # noqa: BLE001 - informational only
        return None


def torch_state() -> dict[str, Any]:
    import torch

    return {"version": torch.__version__, "cuda_available": torch.cuda.is_available(),
            "cuda_devices": torch.cuda.device_count(), "num_threads": torch.get_num_threads(),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled()}


def collect_run_info(cfg: Any) -> dict[str, Any]:
    config = plain_config(cfg)
    return {"command": [sys.executable, *sys.argv], "cwd": os.getcwd(),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host": platform.node(),
            "python": platform.python_version(), "platform": platform.platform(),
            "seed": config.get("seed"), "seeds": find_seeds(config), "git": git_state(),
            "packages": package_versions(), "torch": torch_state(), "hydra": hydra_state(),
            "env": {k: os.environ[k] for k in ("CUDA_VISIBLE_DEVICES", "HYPERRAG_CACHE", "HYPERRAG_SHARED_DATA",
                                                "WANDB_MODE", "HF_HUB_OFFLINE", "PYTHONHASHSEED") if k in os.environ},
            "python_hash_seed": python_hash_seed(), "config": config}


def python_hash_seed() -> str:
    """``PYTHONHASHSEED`` as this interpreter started (``"random"`` when unset): it fixes the iteration order
    of Python sets of strings, which HippoRAG 2's reference seed ties (``seed_ties: reference``) follow."""
    value = os.environ.get("PYTHONHASHSEED", "")
    return value if value not in ("", "random") else "random"


def write_run_info(cfg: Any, out_dir: str | Path, **extra: Any) -> Path:
    """Write ``<out_dir>/run_info.json``; ``extra`` fields are merged in (e.g. the finish time)."""
    path = Path(out_dir) / "run_info.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    info = collect_run_info(cfg)
    info.update(extra)
    path.write_text(json.dumps(info, indent=1, default=str))
    return path


def update_run_info(out_dir: str | Path, **fields: Any) -> None:
    path = Path(out_dir) / "run_info.json"
    info = json.loads(path.read_text()) if path.is_file() else {}
    info.update(fields)
    path.write_text(json.dumps(info, indent=1, default=str))


#: the roles a preset's ``paper_models`` may name: the config node that holds each role's model (``extraction``:
#: the triples a graph is built from; ``causal_classifier``: CDF-RAG's cause-effect pair classifier)
MODEL_ROLES = ("llm", "reader", "embedder", "judge", "extraction", "causal_classifier")


def _llm_model_id(node: Any) -> str | None:
    """The model id an LLM config node serves: ``None`` for no LLM, ``oracle`` for the gold-informed oracle."""
    if node is None:
        return None
    target = str(node.get("_target_", ""))
    if target.endswith(".NoLLM") or not target:
        return None
    if target.endswith(".OracleLLM"):
        return "oracle"
    for key in ("model", "served_model_name", "model_alias", "model_path"):  # the weights loaded, not the name
        # they are served under (llm=vllm llm.served_model_name=gpt-4o-mini still answers with llm.model)
        value = node.get(key)
        if value:
            return str(value)
    return target.rsplit(".", 1)[-1]


def role_models(cfg: Any) -> dict[str, str]:
    """The model id each role of a retrieval run used: ``llm`` (extraction, filtering, scoring), ``reader`` (the
    QA reader: the LLM itself with ``reader_llm=same``) and ``embedder``; roles with no model are left out."""
    used: dict[str, str] = {}
    llm = _llm_model_id(cfg.get("llm"))
    if llm:
        used["llm"] = llm
        served = (cfg.get("llm") or {}).get("served_model_name")
        if served and str(served) != llm:  # recorded beside the model, never in its place
            used["llm_served_as"] = str(served)
    reader_node = cfg.get("reader_llm")
    reader = llm if reader_node is None or reader_node.get("same_as_llm", False) else _llm_model_id(reader_node)
    if reader:
        used["reader"] = reader
    embedder = cfg.get("embedder")
    if embedder is not None and embedder.get("model"):
        used["embedder"] = str(embedder.get("model"))
    retriever = (cfg.get("method") or {}).get("retriever") or {}
    if "classifier" in retriever and retriever.get("causal_retrieval", True) is not False:  # CDF-RAG's pair classifier
        used["causal_classifier"] = causal_classifier_id(retriever.get("classifier"),
                                                         retriever.get("classifier_encoder"))
    return used


def causal_classifier_id(classifier: str | None, encoder_name: str | None) -> str:
    """What scored CDF-RAG's candidate cause-effect pairs: a checkpoint path, the newest UniCausal-trained
    checkpoint on ``encoder_name`` (``auto``; rule priors when there is none), or the rule priors alone
    (``null``)."""
    if classifier is None or str(classifier).lower() in ("null", "none", ""):
        return "rule priors (no classifier)"
    if str(classifier) == "auto":
        return f"auto: newest models/causal_pair/* on {encoder_name}, else rule priors"
    return str(classifier)


def _same_model(a: str, b: str) -> bool:
    """Model ids compared without case and without an organisation prefix (``meta-llama/...``)."""
    def norm(x: str) -> str:
        return str(x).strip().lower().rsplit("/", 1)[-1]

    return norm(a) == norm(b)


def substituted_roles(paper: Any, used: dict[str, str]) -> list[str]:
    """The roles whose model differs from the one the paper names (``paper``: role → id or list of ids).

    The oracle and no LLM are not models: they carry their own labels (upper bound, LLM-free) and are not
    counted here."""
    out = []
    for role, named in (paper or {}).items():
        if named is None or role not in used or used[role] == "oracle":
            continue
        accepted = [named] if isinstance(named, str) else list(named)
        if not any(_same_model(used[role], n) for n in accepted):
            out.append(str(role))
    return out


def dataset_record(dataset: Any) -> dict[str, Any]:
    """What a run's figures were computed on: the dataset's name, its query and passage counts, and SHA-256
    digests (12 hex digits) of the queries as read (id, question, answers, in order) and of the corpus (each
    passage's title and text, sorted): two runs on the same digests scored the same questions over the same
    passages, whichever layout the files came in (passage ids differ between layouts)."""
    from hyperrag.utils.hashing import Hasher

    queries, corpus = Hasher(), Hasher()
    for q in dataset.queries:
        queries.update([q.id, q.question, sorted(q.answers)])
    for title, text in sorted((p.title, p.text) for p in dataset.corpus.passages):
        corpus.update([title, text])
    return {"name": dataset.name, "queries": len(dataset.queries), "passages": len(dataset.corpus),
            "queries_sha256": queries.hexdigest()[:12], "corpus_sha256": corpus.hexdigest()[:12],
            "source": str(getattr(dataset.corpus, "source", "") or "")}
