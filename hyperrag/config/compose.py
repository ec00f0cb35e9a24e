"""A method's settings exactly as ``hydra_configs/`` gives them, for code that builds a retriever by hand.

Tests, benchmarks and notebooks never repeat a default: they compose the method's YAML the way ``retrieve.py``
does and change what they need::

    settings = method_settings("hugrag", index_root=str(tmp), hierarchy={"backend": "cpu"})
    retriever = HugRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")

Nested dicts merge key by key; settings objects and dataclasses are accepted as overrides too.

Components that are not settings classes (a Lightning module a training task builds, the LLM client) are built
from the arguments their YAML node gives, with :func:`config_arguments` / :func:`task_arguments`::

    model = CausalPairClassifier(**task_arguments("causal_pair", max_length=64))
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
from collections.abc import Iterator, Sequence
from typing import Any

from hyperrag.config.choices import check_choices, config_dir
from hyperrag.config.validation import plain, validate

METHOD_KEY = "method.retriever"
#: config groups a composition outside a run sets to their quiet choice (no LLM server, no tracking, no logger)
_QUIET = {"retrieve": ("llm=none", "tracking=none"), "train": ("logger=none",), "holisqa": ("llm=none",)}
_HYDRA_KEYS = ("_target_", "_partial_", "_convert_", "_recursive_", "_args_")


def compose_config(config_name: str, overrides: list[str], hydra_node: bool = False) -> Any:
    """``config_name`` composed with Hydra's compose API (outside a running Hydra app, or inside one); an override
    choosing an option its config group lacks raises :class:`~hyperrag.errors.InputError` naming the choices.
    ``hydra_node`` keeps Hydra's own ``hydra`` node (a multirun's ``hydra.sweeper.params``)."""
    from hydra import compose

    check_choices(config_name, overrides)
    with hydra_context():
        return compose(config_name, overrides=overrides, return_hydra_config=hydra_node)


@contextlib.contextmanager
def hydra_context() -> Iterator[Any]:
    """Hydra's global state on ``hydra_configs/`` (left as it is inside a running Hydra app); yields its config
    loader."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        yield GlobalHydra.instance().config_loader()
        return
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3", job_name="compose"):
        yield GlobalHydra.instance().config_loader()


@functools.cache
def _node(config_name: str, config_overrides: tuple[str, ...], key: str) -> Any:
    from omegaconf import OmegaConf

    chosen = {o.split("=", 1)[0].lstrip("+~") for o in config_overrides}
    quiet = [q for q in _QUIET.get(config_name, ()) if q.split("=", 1)[0] not in chosen]
    cfg = compose_config(config_name, [*quiet, *config_overrides])
    node = OmegaConf.select(cfg, key)
    if node is None:
        raise KeyError(f"{config_name}.yaml composed with {list(config_overrides)} has no {key!r}")
    return plain(node)  # an interpolation naming a key the config lacks: InputError naming the setting


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def configured(key: str, kind: type | None = None, *, config: str = "retrieve", config_overrides: Sequence[str] = (),
               **overrides: Any) -> Any:
    """The settings object at ``key`` of ``<config>.yaml`` (default ``retrieve.yaml``) composed with
    ``config_overrides`` (Hydra override strings such as ``method=hugrag``), with ``overrides`` merged in and the
    result validated. ``kind``: the settings class (default: the node's ``_target_``)."""
    from hydra.utils import get_object
    from omegaconf import OmegaConf

    node = copy.deepcopy(_node(config, tuple(config_overrides), key))
    target = node.pop("_target_", None)
    kind = kind or get_object(target)
    merged = OmegaConf.merge(node, {k: _plain(v) for k, v in overrides.items()})
    return validate(kind, merged, key)


def method_settings(name: str, **overrides: Any) -> Any:
    """The settings object of ``hydra_configs/method/<name>.yaml`` (its ``retriever`` node, resolved as
    ``retrieve.py method=<name>`` resolves it), with ``overrides`` merged in and the result validated."""
    return configured(METHOD_KEY, config_overrides=(f"method={name}",), **overrides)


def config_arguments(config: str, key: str, *, config_overrides: Sequence[str] = (),
                     **overrides: Any) -> dict[str, Any]:
    """The keyword arguments the node at ``key`` of ``<config>.yaml`` (composed with ``config_overrides``) gives its
    ``_target_``, Hydra's own keys left out, with ``overrides`` replacing or adding arguments (any value: a
    tensor, a model). For building by hand what a run instantiates from that node, without a second copy of
    its values."""
    node = copy.deepcopy(_node(config, tuple(config_overrides), key))
    return {**{k: v for k, v in node.items() if k not in _HYDRA_KEYS}, **overrides}


def task_arguments(task: str, key: str = "model", **overrides: Any) -> dict[str, Any]:
    """:func:`config_arguments` of ``task.<key>`` of ``train.yaml task=<task>`` (``hydra_configs/task/<task>.yaml``;
    ``key``: ``model`` or ``datamodule``): the arguments ``python train.py task=<task>`` builds it with, apart
    from those the task adds itself (sizes, data) and ``overrides``."""
    return config_arguments("train", f"task.{key}", config_overrides=(f"task={task}",), **overrides)


__all__ = ["compose_config", "config_arguments", "config_dir", "configured", "method_settings", "task_arguments"]
