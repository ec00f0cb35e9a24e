"""An interpolation that names a key the config lacks stops with one line naming the setting, exit 2 — most often a
misspelt value of a setting that picks an entry (``method.retriever.variant=paperr`` reads
``${method.variants.${method.retriever.variant}.boost_beta}``), which OmegaConf reports as a traceback
(hyperrag/config/validation.py ``check_interpolations``, run by every entry point's command-line check)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from omegaconf import OmegaConf

from hyperrag.config import compose_config
from hyperrag.config.command_line import check_command_line
from hyperrag.config.compose import METHOD_KEY, configured
from hyperrag.config.validation import check_interpolations, plain
from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT

CATRAG_LINE = ("method.retriever.variant: unknown choice 'paperr'; choices: authors_code, paper "
               "(the entries of method.variants)")


def one_line(err: pytest.ExceptionInfo[InputError]) -> str:
    line = err.value.one_line()
    assert "\n" not in line
    return line


def test_a_misspelt_choice_read_through_an_interpolation_names_the_setting_and_its_choices():
    cfg = compose_config("retrieve", ["method=catrag", "method.retriever.variant=paperr"])
    with pytest.raises(InputError) as err:
        check_interpolations(cfg)
    assert one_line(err) == CATRAG_LINE


def test_every_variant_resolves():
    for variant in ("paper", "authors_code"):
        check_interpolations(compose_config("retrieve", ["method=catrag", f"method.retriever.variant={variant}"]))


def test_the_selection_rule_is_general_and_other_missing_keys_name_the_interpolated_setting():
    cfg = OmegaConf.create({"table": {"a": 1, "b": 2}, "pick": "c", "x": {"y": ["${table.${pick}}"]}})
    with pytest.raises(InputError) as err:
        check_interpolations(cfg)
    assert one_line(err) == "pick: unknown choice 'c'; choices: a, b (the entries of table)"
    cfg = OmegaConf.create({"a": {"b": 1}, "x": "${a.c}", "env": "${oc.env:HYPERRAG_TEST_UNSET_VARIABLE}"})
    with pytest.raises(InputError) as err:
        check_interpolations(cfg)
    assert one_line(err) == "x: ${a.c} cannot be resolved: Interpolation key 'a.c' not found"
    del cfg["x"]  # an unset environment variable is left to the code that reads it (it may have a default there)
    check_interpolations(cfg)


def test_settings_composed_by_hand_and_converted_containers_say_the_same():
    with pytest.raises(InputError) as err:
        configured(METHOD_KEY, config_overrides=("method=catrag", "method.retriever.variant=paperr"))
    assert one_line(err) == CATRAG_LINE
    cfg = compose_config("retrieve", ["method=catrag", "method.retriever.variant=paperr"])
    with pytest.raises(InputError) as err:
        plain(cfg.method.retriever.edge_scoring)  # what check_config / instantiate convert
    assert one_line(err) == CATRAG_LINE


@pytest.mark.parametrize(("config", "argv", "line"), [
    ("retrieve", ["method=catrag", "method.retriever.variant=paperr", "data=sample", "llm=none"],
     f"error: {CATRAG_LINE}"),
    ("train", ["task=poincare", "method.retriever.train.batch_size=${method.retriever.train.nope}"],
     ("error: method.retriever.train.batch_size: ${method.retriever.train.nope} cannot be resolved: Interpolation "
      "key 'method.retriever.train.nope' not found")),
    ("evaluate", ["predictions=x", "context_top_n=${nope}"],
     "error: context_top_n: ${nope} cannot be resolved: Interpolation key 'nope' not found"),
    ("report", ["runs=x", "title=${runs_typo}"],
     "error: title: ${runs_typo} cannot be resolved: Interpolation key 'runs_typo' not found"),
])
def test_each_entry_point_stops_with_one_line_and_exit_2(config, argv, line, capsys):
    with pytest.raises(SystemExit) as stop:
        check_command_line(config, argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [line]


@pytest.mark.slow  # a subprocess (~5-8 s on 2 busy cores); the in-process tests above run by default
def test_retrieve_py_with_a_misspelt_catrag_variant_exits_2_in_one_line(tmp_path):
    """The command of issue 40, as a user runs it: no omegaconf traceback, nothing written."""
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "retrieve.py"), "method=catrag",
                           "method.retriever.variant=paperr", "data=sample", "llm=none", f"out={tmp_path / 'run'}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"error: {CATRAG_LINE}"]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv", [
    ["-m", "method=catrag", "method.retriever.variant=paperr", "data=sample", "llm=none"],  # fixed in every job
    ["-m", "method=catrag", "method.retriever.variant=paper,paperr", "data=sample", "llm=none"],  # one swept value
])
def test_a_multirun_with_a_misspelt_choice_stops_with_one_line_and_exit_2(argv, capsys):
    """Every published table runs with ``-m``: its jobs are checked as a single run is (review finding, issue 40)."""
    with pytest.raises(SystemExit) as stop:
        check_command_line("retrieve", argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {CATRAG_LINE}"]


def test_a_multirun_is_checked_on_jobs_covering_every_swept_value_of_the_experiment_and_the_command_line():
    from hyperrag.config.command_line import _multirun_jobs

    jobs = _multirun_jobs("retrieve", ["experiment=catrag_table", "llm=none", "seed=0,1"])
    chosen = {override for job in jobs for override in job}
    methods = {o.split("=", 1)[1] for o in chosen if o.startswith("method=")}
    assert methods == {"no_retrieval", "bm25", "dense", "raptor", "lightrag", "hipporag2", "catrag", "linearrag"}
    assert {"data.name=musique", "data.name=hover", "seed=0", "seed=1"} <= chosen
    assert all("experiment=catrag_table" in job and "llm=none" in job for job in jobs)
    assert len(jobs) == 2 * 8  # the command line's 2 values, each with the experiment's 8-long cover: not 8 × 4 × 2
