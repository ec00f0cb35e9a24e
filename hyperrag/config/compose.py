"""A method's settings exactly as ``hydra_configs/`` gives them, for code that builds a retriever by hand.

Tests, benchmarks and notebooks never repeat a default: they compose the method's YAML the way ``retrieve.py``
does and change what they need::

    settings = method_settings("hugrag", index_root=str(tmp), hierarchy={"backend": "cpu"})
    retriever = HugRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")

Nested dicts merge key by key; settings objects and dataclasses are accepted as overrides too.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperrag.config.validation import validate

METHOD_KEY = "method.retriever"


def config_dir() -> Path:
    """The ``hydra_configs`` folder the entry points compose from (``hyperrag.conf``, from a checkout or a wheel)."""
    from hyperrag.conf import CONFIG_DIR

    return CONFIG_DIR


def compose_config(config_name: str, overrides: list[str]) -> Any:
    """``config_name`` composed with Hydra's compose API (outside a running Hydra app, or inside one)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    if GlobalHydra.instance().is_initialized():
        return compose(config_name, overrides=overrides)
    with initialize_config_dir(config_dir=str(config_dir()), version_base="1.3", job_name="compose"):
        return compose(config_name, overrides=overrides)


@functools.cache
def _node(config_overrides: tuple[str, ...], key: str) -> Any:
    from omegaconf import OmegaConf

    cfg = compose_config("retrieve", ["llm=none", "tracking=none", *config_overrides])
    return OmegaConf.to_container(OmegaConf.select(cfg, key), resolve=True)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def configured(key: str, kind: type | None = None, *, config_overrides: Sequence[str] = (),
               **overrides: Any) -> Any:
    """The settings object at ``key`` of ``retrieve.yaml`` composed with ``config_overrides`` (Hydra override
    strings such as ``method=hugrag``), with ``overrides`` merged in and the result validated. ``kind``: the
    settings class (default: the node's ``_target_``)."""
    from hydra.utils import get_object
    from omegaconf import OmegaConf

    node = copy.deepcopy(_node(tuple(config_overrides), key))
    target = node.pop("_target_", None)
    kind = kind or get_object(target)
    merged = OmegaConf.merge(node, {k: _plain(v) for k, v in overrides.items()})
    return validate(kind, merged, key)


def method_settings(name: str, **overrides: Any) -> Any:
    """The settings object of ``hydra_configs/method/<name>.yaml`` (its ``retriever`` node, resolved as
    ``retrieve.py method=<name>`` resolves it), with ``overrides`` merged in and the result validated."""
    return configured(METHOD_KEY, config_overrides=(f"method={name}",), **overrides)


__all__ = ["compose_config", "config_dir", "configured", "method_settings"]
