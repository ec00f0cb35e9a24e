"""Typed settings: the YAML is their only source, bad values stop at composition with one line and exit 2."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate
from omegaconf import OmegaConf
from pydantic.dataclasses import is_pydantic_dataclass

from hyperrag.config import as_dict, method_settings
from hyperrag.errors import InputError
from hyperrag.runners.run_settings import check_retrieve_config, check_train_config
from tests.conftest import REPO_ROOT

CONFIGS = REPO_ROOT / "hydra_configs"
METHODS = sorted(p.stem for p in (CONFIGS / "method").glob("*.yaml"))


def compose_config(name: str, *overrides: str):
    with initialize_config_dir(config_dir=str(CONFIGS), version_base="1.3"):
        return compose(name, overrides=list(overrides))


def settings_classes(cls: type, seen: set[type] | None = None) -> set[type]:
    """``cls`` and every settings class nested in its fields."""
    seen = set() if seen is None else seen
    seen.add(cls)
    for kind in typing.get_type_hints(cls).values():
        if isinstance(kind, type) and is_pydantic_dataclass(kind) and kind not in seen:
            settings_classes(kind, seen)
    return seen


def tuples_as_lists(value):
    if isinstance(value, dict):
        return {k: tuples_as_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [tuples_as_lists(v) for v in value]
    return value


@pytest.mark.parametrize("method", METHODS)
def test_the_yaml_is_the_settings(method):
    """What the method's YAML says is exactly its settings object, field for field (no field the YAML lacks, no
    YAML key the class lacks), and no settings class anywhere below it has a default of its own."""
    cfg = compose_config("retrieve", f"method={method}", "llm=none")
    node = OmegaConf.to_container(cfg.method.retriever, resolve=True)
    node.pop("_target_")
    settings = method_settings(method)
    assert tuples_as_lists(as_dict(settings)) == node
    for cls in settings_classes(type(settings)):
        with_default = [f.name for f in dataclasses.fields(cls)
                        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING]
        assert not with_default, f"{cls.__name__} has Python defaults for {with_default}: they belong in the YAML"
    assert settings.retriever.endswith("Retriever")


def test_method_settings_merges_overrides_and_validates():
    base = method_settings("hugrag")
    changed = method_settings("hugrag", alpha=0.5, hierarchy={"backend": "cpu"}, gates={"max_calls": 3})
    assert changed.alpha == 0.5 and changed.hierarchy.backend == "cpu" and changed.gates.max_calls == 3
    assert changed.hierarchy.context_window == base.hierarchy.context_window  # the rest stays as configured
    assert dataclasses.replace(changed.gates, top_m=1).top_m == 1
    with pytest.raises(ValueError, match="greater than or equal to 0"):  # checked in Python too (pydantic's message)
        dataclasses.replace(changed.gates, top_m=-1)
    with pytest.raises(InputError, match=r"^method\.retriever\.no_such_setting: unknown setting$"):
        method_settings("hugrag", no_such_setting=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.alpha = 0.1  # type: ignore[misc]


@pytest.mark.parametrize("overrides, line", [
    (["batch_size=0"], "batch_size: must be >= 1, got 0"),
    (["top_k=-5"], "top_k: must be >= 1, got -5"),
    (["ks=[2,0]"], "ks[1]: must be >= 1, got 0"),
    (["limit_queries=-1"], "limit_queries: must be >= 1, got -1"),
    (["embedder.batch_size=0"], "embedder.batch_size: must be >= 1, got 0"),
    (["method=hipporag2", "method.retriever.damping=1.0"], "method.retriever.damping: must be < 1.0, got 1.0"),
    (["method=hipporag2", "method.retriever.fact_top_k=-3"], "method.retriever.fact_top_k: must be >= 1, got -3"),
    (["method=catrag", "method.retriever.edge_scoring.k_edge=-1"],
     "method.retriever.edge_scoring.k_edge: must be >= 0, got -1"),
    (["method=hugrag", "method.retriever.lexical=tfidf"],
     "method.retriever.lexical: must be one of 'token_overlap', 'bm25' or 'overlap', got 'tfidf'"),
    (["method=hugrag", "method.retriever.max_hops=0"], "method.retriever.max_hops: must be >= 1, got 0"),
    (["method=hugrag", "method.retriever.seeding=flat"],
     "method.retriever.seeding: must be one of 'per_level' or 'pooled', got 'flat'"),
    (["method=hugrag", "method.retriever.lexical_text=summary"],
     "method.retriever.lexical_text: must be one of 'title+description' or 'title', got 'summary'"),
    (["method=hugrag", "method.retriever.gates.budget_split=even"],
     "method.retriever.gates.budget_split: must be one of 'levels' or 'top_down', got 'even'"),
    (["method=hugrag", "method.retriever.gates.prefilter_scope=global"],
     "method.retriever.gates.prefilter_scope: must be one of 'candidates' or 'all_modules', got 'global'"),
    (["shared_graph=hipporag"], "shared_graph: must be one of 'graphrag', got 'hipporag'"),
    (["method=hugrag", "method.retriever.hierarchy.min_module_size=0"],
     "method.retriever.hierarchy.min_module_size: must be >= 1, got 0"),
    (["method=hugrag", "method.retriever.gates.threshold=2"], "method.retriever.gates.threshold: must be <= 1.0, got 2"),
    (["method=hyperrag", "method.retriever.train.batch_size=0"],
     "method.retriever.train.batch_size: must be >= 1, got 0"),
    (["method=hyperrag", "method.retriever.train.max_epochs=-1"],  # 0 is the untrained arm (issue 47)
     "method.retriever.train.max_epochs: must be >= 0, got -1"),
    (["method=hyperrag", "method.retriever.implicit.top_k=-2"], "method.retriever.implicit.top_k: must be >= 1, got -2"),
    (["method=cdfrag", "method.retriever.traversal.decay=1.5"], "method.retriever.traversal.decay: must be <= 1.0, got 1.5"),
    (["method=cdfrag", "method.retriever.fixed_action=paraphrase"],
     "method.retriever.fixed_action: must be one of 'expand', 'simplify', 'decompose' or 'none', got 'paraphrase'"),
    (["method=bm25", "+method.retriever.k3=1"], "method.retriever.k3: unknown setting"),
    (["graph.knn.backend=annoy"],
     "method.retriever.graph.knn.backend: must be one of 'auto', 'exact' or 'approximate', got 'annoy'"),
])
def test_retrieve_config_check_names_the_setting(overrides, line):
    cfg = compose_config("retrieve", *overrides)
    with pytest.raises(InputError) as err:
        check_retrieve_config(cfg)
    assert err.value.one_line() == line


@pytest.mark.parametrize("overrides, line", [
    (["task=poincare", "method.retriever.train.batch_size=0"], "method.retriever.train.batch_size: must be >= 1, got 0"),
    (["task=poincare_tree", "task.datamodule.batch_size=0"], "task.datamodule.batch_size: must be >= 1, got 0"),
    (["task=poincare_tree", "task.depth=-1"], "task.depth: must be >= 1, got -1"),
    (["task=poincare_openie", "task.model.lr=0"], "task.model.lr: must be > 0.0, got 0"),
    (["task=poincare_openie", "task.graph.max_neighbors=0"], "task.graph.max_neighbors: must be >= 1, got 0"),
    (["task=causal_pair", "task.model.max_steps=0"], "task.model.max_steps: must be >= 1, got 0"),
    (["task=causal_pair", "task.datamodule.val_fraction=1.5"],
     "task.datamodule.val_fraction: must be <= 1.0, got 1.5"),
    (["task=ppo", "task.env.k=0"], "task.env.k: must be >= 1, got 0"),
    (["task=ppo", "task.model.minibatch_size=0"], "task.model.minibatch_size: must be >= 1, got 0"),
    (["task=ppo", "method.retriever.traversal.max_paths=0"], "method.retriever.traversal.max_paths: must be >= 1, got 0"),
    (["torch_threads=0"], "torch_threads: must be >= 1, got 0"),
])
def test_train_config_check_names_the_setting(overrides, line):
    cfg = compose_config("train", *overrides)
    with pytest.raises(InputError) as err:
        check_train_config(cfg)
    assert err.value.one_line() == line


@pytest.mark.parametrize("task", sorted(p.stem for p in (CONFIGS / "task").glob("*.yaml")))
def test_every_task_config_passes_the_check(task):
    check_train_config(compose_config("train", f"task={task}"))


def sweep_jobs(experiment: str) -> list[list[str]]:
    """One override list per swept value of every parameter of the experiment's sweeper (the others at their
    first value); ``glob(...)`` of methods expands to the method configs it names. A single-run experiment (no
    sweeper) is one job."""
    params = OmegaConf.select(OmegaConf.load(CONFIGS / "experiment" / f"{experiment}.yaml"), "hydra.sweeper.params")
    if not params:
        return [[]]
    choices = {}
    for key, spec in params.items():
        spec = str(spec)
        if spec.startswith("glob("):
            inner = spec[5:-1]
            names = METHODS if inner.startswith("*") else [m for m in inner.strip("[]").split(",") if m in METHODS]
            choices[key] = names
        else:
            choices[key] = spec.split(",")
    jobs = []
    for key, values in choices.items():
        for v in values:
            job = {k: vs[0] for k, vs in choices.items()}
            job[key] = v
            jobs.append([f"{k}={x}" for k, x in job.items()])
    return jobs


@pytest.mark.parametrize("experiment", sorted(p.stem for p in (CONFIGS / "experiment").glob("*.yaml")))
def test_every_experiment_job_composes_and_passes_the_check(experiment):
    """The override paths the README and the experiment sweeps use exist and hold valid values."""
    for job in sweep_jobs(experiment):
        cfg = compose_config("retrieve", f"experiment={experiment}", *job)
        check_retrieve_config(cfg)
        assert type(instantiate(cfg.method.retriever)).__name__.endswith("Settings")


def test_oracle_ceiling_cross_fits_cdfrag_only():
    """experiment=oracle_ceiling cross-fits CDF-RAG's policy (5 folds) and runs every other method without cv_folds:
    hyperrag refuses it (it exited 2 at its first hyperrag job), the others train nothing on the questions."""
    for method in ("hipporag2", "catrag", "hugrag", "hyperrag", "cdfrag"):
        for llm in ("none", "oracle"):
            cfg = compose_config("retrieve", "experiment=oracle_ceiling", f"method={method}", f"llm={llm}")
            check_retrieve_config(cfg)
            assert cfg.cv_folds == (5 if method == "cdfrag" else None), method
    hyperrag = compose_config("retrieve", "experiment=oracle_ceiling", "method=hyperrag")
    assert hyperrag.method.get("cv_folds_refused") and not hyperrag.get("cv_folds")  # retrieve.py: no cross-fit


@pytest.mark.parametrize("ablation", sorted(p.stem for p in (CONFIGS / "ablation").glob("*.yaml")
                                             if not p.stem.startswith("hugrag_")))
def test_ablations_switch_one_catrag_component(ablation):
    cfg = compose_config("retrieve", "method=catrag", f"+ablation={ablation}")
    check_retrieve_config(cfg)
    settings = instantiate(cfg.method.retriever)
    off = {k for k in ("anchoring", "passage_boost", "edge_weighting") if not getattr(settings, k)}
    assert off == (set() if ablation == "full" else {ablation.removeprefix("no_")})


@pytest.mark.parametrize("ablation", sorted(p.stem for p in (CONFIGS / "ablation").glob("hugrag_*.yaml")))
def test_hugrag_ablations_switch_one_component(ablation):
    """Fig 3's arms: each one turns off one HugRAG component and keeps the rest (the reader and evidence size)."""
    cfg = compose_config("retrieve", "experiment=hugrag_ablation", f"ablation={ablation}")
    check_retrieve_config(cfg)
    s = instantiate(cfg.method.retriever)
    full = instantiate(compose_config("retrieve", "experiment=hugrag_ablation").method.retriever)
    changed = {k for k in ("kl", "edge_weights", "gates", "path_selection") if getattr(s, k) != getattr(full, k)}
    expected = {"hugrag_full": set(), "hugrag_no_hierarchy": {"kl", "edge_weights", "gates"},
                "hugrag_no_gates": {"gates"}, "hugrag_standard_filter": {"path_selection"},
                "hugrag_no_filter": {"path_selection"}}[ablation]
    assert changed == expected
    assert s.path_selection.max_selected == full.path_selection.max_selected  # same evidence size in every arm


def run_entry(script: str, tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYPERRAG_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline"}
    return subprocess.run([sys.executable, str(REPO_ROOT / script), f"out={tmp_path / 'run'}", *overrides],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize("script, overrides, line", [
    ("retrieve.py", ["batch_size=0"], "error: batch_size: must be >= 1, got 0"),
    ("retrieve.py", ["method=catrag", "method.retriever.fact_top_k=-2"],
     "error: method.retriever.fact_top_k: must be >= 1, got -2"),
    ("train.py", ["task=poincare", "method.retriever.train.batch_size=0"],
     "error: method.retriever.train.batch_size: must be >= 1, got 0"),
    pytest.param("train.py", ["task=poincare_tree", "task.datamodule.num_negatives=-3"],
                 "error: task.datamodule.num_negatives: must be >= 1, got -3",
                 marks=pytest.mark.slow),  # ~13 s (the task's module imports Lightning before its check); train.py's
    # exit-2 path stays in the default run through the case above
])
def test_entry_points_stop_with_one_line_and_exit_2(tmp_path, script, overrides, line):
    proc = run_entry(script, tmp_path, *overrides)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [line]  # one line, no traceback


@pytest.mark.parametrize("stage", ["baseline", "rl_refinement", "causal_graph", "rewriter", "full"])
def test_cdfrag_ablation_stages_add_one_module_each_and_off_is_off(stage):
    """Table 3's stages: each adds one module to the previous; what a stage has not added is switched off."""
    order = ["baseline", "rl_refinement", "causal_graph", "rewriter", "full"]
    cfg = compose_config("retrieve", "experiment=cdfrag_ablation", f"cdfrag_stage={stage}")
    check_retrieve_config(cfg)
    s = instantiate(cfg.method.retriever)
    on = {"refinement": s.policy == "auto" and bool(cfg.method.cross_fit) and cfg.cv_folds == 5,
          "causal_graph": s.causal_retrieval and s.generation.causal_check == "llm",
          "rewriter": s.generation.rewrite_context,
          "hallucination_correction": s.generation.hallucination_check and s.generation.max_requery > 0}
    expected = dict(zip(["refinement", "causal_graph", "rewriter", "hallucination_correction"],
                        [order.index(stage) >= i for i in range(1, 5)]))
    assert on == expected
    if stage == "baseline":  # no refinement at all: no policy and no fixed action, nothing cross-fitted
        assert s.policy is None and s.fixed_action == "none" and cfg.cv_folds is None


def test_paper_preset_is_a_method_config_the_ablation_stacks_on():
    """method/hugrag_paper.yaml holds the paper form; experiment=hugrag_paper and the Fig 3 ablation use it."""
    paper = instantiate(compose_config("retrieve", "method=hugrag_paper").method.retriever)
    experiment = instantiate(compose_config("retrieve", "experiment=hugrag_paper").method.retriever)
    ablation = instantiate(compose_config("retrieve", "experiment=hugrag_ablation").method.retriever)
    from dataclasses import replace

    assert replace(experiment, answer_style=paper.answer_style) == paper  # the experiment adds explanatory answers
    for s in (paper, ablation):
        assert s.seeding == "per_level" and s.dense_mix == 0.0 and s.path_selection.answer_passages == 0
    assert paper.gates.max_calls is None and ablation.gates.max_calls == 40  # the slice's cap for SmolLM2
    default = instantiate(compose_config("retrieve", "method=hugrag").method.retriever)
    assert default.path_selection.answer_passages == 5
    # the paper form's own budget (5-fold CV, issue 38) and the paper's prompt texts; ours one override away
    assert (paper.token_budget, paper.node_tokens) == (4096, 128) and (default.token_budget, default.node_tokens) == (512, 64)
    assert paper.prompts == default.prompts == "paper"
    extended = instantiate(compose_config("retrieve", "method=hugrag_paper", "method.retriever.prompts=extended",
                                          "method.retriever.token_budget=512").method.retriever)
    assert extended.prompts == "extended" and extended.token_budget == 512
