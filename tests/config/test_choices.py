"""An unknown config-group choice stops with one line naming the group and its choices, exit 2 — from the entry
points' command lines and from every composition (hyperrag/config/choices.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hyperrag.config import compose_config
from hyperrag.config.choices import check_choices, group_choices
from hyperrag.errors import InputError
from tests.conftest import REPO_ROOT


def test_group_choices_are_the_yaml_files_of_the_group():
    assert {"local", "none", "openai_compatible", "oracle", "vllm"} <= set(group_choices("llm"))
    assert group_choices("llm") == sorted(group_choices("llm"))
    assert {"dense", "hipporag2", "hugrag"} <= set(group_choices("method"))


@pytest.mark.parametrize(("overrides", "group", "value"), [
    (["method=nope"], "method", "nope"),
    (["top_k=3", "llm=nope"], "llm", "nope"),
    (["llm=none,nope"], "llm", "nope"),            # a multirun sweep: every choice checked
    (["+experiment=nope"], "experiment", "nope"),
    (["llm@reader=nope"], "llm", "nope"),          # a group placed at another package
])
def test_an_unknown_choice_names_the_group_and_every_choice(overrides, group, value):
    with pytest.raises(InputError) as err:
        check_choices("retrieve", overrides)
    line = err.value.one_line()
    assert line.startswith(f"{group}: unknown choice {value!r}; choices: ")
    assert line.endswith(", ".join(group_choices(group))) and "\n" not in line


@pytest.mark.parametrize("overrides", [
    ["method=dense", "llm=none,local", "experiment=null", "~tracking", "hydra/job_logging=stdout", "top_k=3",
     "method.retriever.top_k=4", "data=glob(*)"],
])
def test_known_choices_and_other_overrides_pass(overrides):
    check_choices("retrieve", overrides)


def test_every_composition_checks_its_choices():
    with pytest.raises(InputError, match=r"^embedder: unknown choice 'nope'; choices: minilm, nv_embed_v2, openai_compatible, "
                                         r"text_embedding_3_small$"):
        compose_config("retrieve", ["embedder=nope"])


@pytest.mark.parametrize(("script", "args", "line"), [
    ("retrieve.py", ["method=nope"], "error: method: unknown choice 'nope'; choices: bm25, catrag, cdfrag, dense"),
    ("train.py", ["task=nope"], "error: task: unknown choice 'nope'; choices: causal_pair, poincare"),
    ("evaluate.py", ["predictions=x", "llm=nope"], "error: llm: unknown choice 'nope'; choices: gemini_flash_lite, gpt4, gpt5_nano, llama33_70b, local"),
    ("report.py", ["runs=x", "nosuchkey=1"],
     ("error: field 'overrides': cannot compose report.yaml: Could not override 'nosuchkey'. To append to your "
      "config use +nosuchkey=1")),
])
def test_the_entry_points_stop_with_one_line_and_exit_2(script, args, line):
    proc = subprocess.run([sys.executable, script, *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith(line), proc.stderr
