"""The YAML under hydra_configs/ is the only source of a setting's value: the Python classes Hydra builds from it
take every setting as a required argument (no second, drifting default), and what builds them by hand composes
the same YAML."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from hyperrag.config import config_arguments, task_arguments

# (class, the task YAML whose node builds it, node): every argument that node gives is required in Python
TASK_NODES = [
    ("hyperrag.causal.classifier.CausalPairClassifier", "causal_pair", "model"),
    ("hyperrag.causal.datamodule.PairDataModule", "causal_pair", "datamodule"),
    ("hyperrag.hyperbolic.poincare_model.PoincareEmbedding", "poincare_tree", "model"),
    ("hyperrag.hyperbolic.poincare_model.PoincareEmbedding", "poincare_openie", "model"),
    ("hyperrag.refinement.ppo.PPOPolicy", "ppo", "model"),
]


def _class(path: str) -> type:
    import importlib

    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def _defaulted(cls: type, names) -> list[str]:
    params = inspect.signature(cls).parameters
    return [n for n in names if params[n].default is not inspect.Parameter.empty]


@pytest.mark.parametrize(("target", "task", "node"), TASK_NODES)
def test_a_task_node_gives_every_setting_and_python_repeats_none(target, task, node):
    cls = _class(target)
    given = task_arguments(task, node)
    assert not _defaulted(cls, given), f"{target} repeats a default of task/{task}.yaml"
    # and the YAML gives every required argument the task does not add itself (sizes, data)
    added = {"num_nodes", "state_dim", "max_steps", "examples"}
    required = {n for n, p in inspect.signature(cls).parameters.items()
                if p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD}
    assert required - added <= set(given), f"task/{task}.yaml misses {sorted(required - added - set(given))}"


def test_hyperrag_ball_settings_name_every_poincare_setting():
    """HyperRAG builds its ball from ``method.retriever.model``: the settings class covers every setting of the
    model (the rest is data: sizes, embeddings, the seed from ``train``)."""
    from hyperrag.hyperbolic.poincare_model import PoincareEmbedding
    from hyperrag.retrievers.settings import PoincareModelSettings

    fields = {f.name for f in dataclasses.fields(PoincareModelSettings)}
    params = set(inspect.signature(PoincareEmbedding).parameters)
    assert params - fields == {"num_nodes", "seed", "num_passages", "init_embeddings", "input_dim"}
    assert not _defaulted(PoincareEmbedding, fields)


@pytest.mark.parametrize("backend", ["local", "vllm", "openai_compatible"])
def test_every_llm_backend_yaml_gives_its_client_settings(backend):
    from hyperrag.llm.client import ClientConfig, client_settings

    node = config_arguments("retrieve", "llm.client", config_overrides=[f"llm={backend}"])
    assert client_settings(backend) == ClientConfig.from_any(node)
    assert not [f for f in dataclasses.fields(ClientConfig) if f.default is not dataclasses.MISSING]


def test_an_incomplete_client_stops_with_the_setting_named():
    from hyperrag.errors import InputError
    from hyperrag.llm.backends import OpenAICompatible

    with pytest.raises(InputError, match=r"llm\.client\.timeout_s: missing"):
        OpenAICompatible(base_url="http://127.0.0.1:9/v1", api_key_env=None, client={"concurrency": 2})


def test_holisqa_builder_settings_come_from_holisqa_yaml():
    from hyperrag.holisqa import HolisQABuilder, HolisQASettings, holisqa_settings

    assert list(inspect.signature(HolisQABuilder).parameters) == ["llm", "settings"]
    s = holisqa_settings(max_slices=3)
    assert isinstance(s, HolisQASettings) and s.max_slices == 3 and s.answer_sentences == (2, 4)
    assert not [f for f in dataclasses.fields(HolisQASettings) if f.default is not dataclasses.MISSING]


def test_an_http_backend_without_client_settings_stops_at_construction():
    from hyperrag.errors import InputError
    from hyperrag.llm.backends import NoLLM, OpenAICompatible
    from hyperrag.llm.oracle import OracleLLM

    with pytest.raises(InputError, match=r"llm\.client: missing"):
        OpenAICompatible(base_url="http://127.0.0.1:9/v1", api_key_env=None)
    assert NoLLM().client_config is None and OracleLLM(refinement="gold_answers", cache_path=None).client_config is None  # they send nothing
