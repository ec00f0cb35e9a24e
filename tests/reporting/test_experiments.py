"""Experiment configs: every one composes and sweeps keys/options that exist; a sweep launched with -m puts
its runs in one W&B group (offline) and one runs.csv, and report.py renders it."""

import glob as globlib
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from hyperrag.reporting.csv_log import read_rows
from hyperrag.reporting.wandb_offline import read_offline_runs
from tests.conftest import REPO_ROOT

CONFIGS = REPO_ROOT / "hydra_configs"
EXPERIMENTS = sorted(p.stem for p in (CONFIGS / "experiment").glob("*.yaml"))


def _some_method_has(name: str, params, key: str) -> bool:
    """Whether one of the methods the experiment sweeps (all of them when it sweeps none) has ``key``."""
    swept = str(params.get("method", ""))
    names = swept[len("glob(["):-2].split(",") if swept.startswith("glob([") else [p.stem for p in (CONFIGS / "method").glob("*.yaml")]
    for method in names:
        with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
            cfg = compose("retrieve", overrides=[f"experiment={name}", f"method={method}"])
        if OmegaConf.select(cfg, key) is not None:
            return True
    return False


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_composes_and_sweeps_real_settings(name):
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        cfg = compose("retrieve", overrides=[f"experiment={name}"], return_hydra_config=True)
    params = cfg.hydra.sweeper.params
    if name.endswith("_paper"):  # a paper's preset is one run (its baselines and ablations are experiments too)
        assert not params and cfg.requires_llm, f"{name}: a single run that needs an LLM"
        return
    if name.endswith("_best"):  # a strongest-composition preset is one run, and says it is not the paper's
        assert not params and cfg.method.paper_form is False and "not the paper's" in cfg.method.label, name
        return
    assert params, f"{name} sweeps nothing"
    for key, value in params.items():
        group = CONFIGS / key
        if group.is_dir():  # a config group: every option named (or matched by glob) must exist
            value = str(value)
            if value.startswith("glob("):
                names = value[len("glob(["):-2].split(",") if value.startswith("glob([") else ["*"]
                matched = [n for n in names if any(globlib.fnmatch.fnmatch(p.stem, n) for p in group.glob("*.yaml"))]
                assert matched, f"{name}: {key}={value} matches no config"
            else:
                assert all((group / f"{v}.yaml").is_file() for v in value.split(",")), f"{name}: {key}={value}"
        elif key.startswith("+"):  # ++key: set where it exists (a method that has it), added elsewhere
            assert _some_method_has(name, params, key.lstrip("+")), f"{name} sweeps {key}, which no swept method has"
        else:
            assert OmegaConf.select(cfg, key) is not None, f"{name} sweeps {key}, which the config lacks"
    assert "sweep.dir" in OmegaConf.to_yaml(cfg.hydra) or cfg.hydra.sweep.dir


def multirun(*overrides: str) -> None:
    """``python retrieve.py -m <overrides>``, in this process (Hydra's own multirun, basic launcher)."""
    from hydra._internal.hydra import Hydra
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.utils import JobReturn, JobStatus

    sys.path.insert(0, str(REPO_ROOT))
    import retrieve

    GlobalHydra().clear()
    try:
        hydra_ = Hydra.create_main_hydra_file_or_module(calling_file=str(REPO_ROOT / "retrieve.py"),
                                                        calling_module=None, config_path="hydra_configs",
                                                        job_name="retrieve")
        results = hydra_.multirun(config_name="retrieve", task_function=retrieve.run,
                                  overrides=[*overrides, "hydra.mode=MULTIRUN"],
                                  with_log_configuration=False)
    finally:
        GlobalHydra().clear()
        HydraConfig.instance().cfg = None
    for batch in results:
        for job in batch:
            assert isinstance(job, JobReturn) and job.status == JobStatus.COMPLETED, job._return_value


def test_sweep_is_one_wandb_group_and_reports(tmp_path, shared_cache, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    sweep = tmp_path / "multirun" / "hipporag2_damping" / "stamp"
    multirun("experiment=hipporag2_damping", "data=sample", "method.retriever.damping=0.3,0.7", "hardware=cpu",
             f"cache_dir={shared_cache}", f"hydra.sweep.dir={sweep}")
    runs = read_offline_runs(sweep / "wandb")
    assert len(runs) == 2 and {r["group"] for r in runs} == {"hipporag2_damping_stamp"}
    assert sorted(r["config"]["method"]["retriever"]["damping"] for r in runs) == [0.3, 0.7]
    assert sorted(r["name"] for r in runs) == ["0:method.retriever.damping=0.3", "1:method.retriever.damping=0.7"]
    rows = read_rows(sweep / "runs.csv")
    assert sorted(r["cfg.method.retriever.damping"] for r in rows) == ["0.3", "0.7"]
    assert all(float(r["recall@10"]) == 100.0 for r in rows)
    jobs = sorted(p.name for p in sweep.iterdir() if (p / "metrics.json").is_file())
    assert jobs == ["data=sample,method.retriever.damping=0.3", "data=sample,method.retriever.damping=0.7"]

    from hyperrag.reporting.report import build_report

    report = build_report([str(tmp_path / "multirun")], tmp_path / "reports")
    assert report == tmp_path / "reports" / "hipporag2_damping" / "report.md"
    text = report.read_text()
    assert "| hipporag2 damping=0.3 (LLM-free) |" in text and "| hipporag2 damping=0.7 (LLM-free) |" in text
    assert "hipporag2_damping_stamp" in text  # W&B group listed with the runs
    assert (report.parent / "sweep_damping.png").stat().st_size > 5000
    assert Path(report.parent / "recall_at_k.png").is_file()
