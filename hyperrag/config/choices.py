"""Config-group choices checked before Hydra composes: ``method=nope`` stops with one line naming the group and
its choices, exit 2, like every other bad setting (Hydra's own report is a paragraph and exit 1).

    python retrieve.py method=nope
    error: method: unknown choice 'nope'; choices: bm25, catrag, cdfrag, dense, ...

:func:`check_choices` checks a list of overrides (the compose API's callers: :func:`~hyperrag.config.compose_config`,
the Python API, ``python -m hyperrag.index``, and the entry points' command lines through
:func:`hyperrag.config.command_line.check_command_line`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError


def config_dir() -> Path:
    """The ``hydra_configs`` folder the entry points compose from (``hyperrag.conf``, from a checkout or a wheel)."""
    from hyperrag.conf import CONFIG_DIR

    return CONFIG_DIR


def one_line(err: BaseException) -> str:
    """Hydra's message on one line (it puts its hint, e.g. ``To append to your config use +key=value``, on a
    second)."""
    return " ".join(line.strip() for line in str(err).splitlines() if line.strip())


def group_choices(group: str, root: Path | None = None) -> list[str]:
    """The options of config group ``group`` (``hydra_configs/<group>/*.yaml``, sub-folders as ``sub/name``)."""
    folder = (root or config_dir()) / group
    return sorted(str(p.relative_to(folder).with_suffix("")) for p in folder.rglob("*.yaml"))


def _values(override: Any) -> Iterator[str]:
    """The choice names an override selects (one, or each of a choice sweep ``a,b``; none for other sweeps)."""
    from hydra.core.override_parser.types import ChoiceSweep, ValueType

    if override.value_type == ValueType.ELEMENT:
        value = override.value()
        if isinstance(value, str):
            yield value
    elif override.value_type in (ValueType.CHOICE_SWEEP, ValueType.SIMPLE_CHOICE_SWEEP):
        sweep = override.value()
        if isinstance(sweep, ChoiceSweep):
            yield from (v for v in sweep.list if isinstance(v, str))


def check_choices(config_name: str, overrides: Sequence[str], root: Path | None = None) -> None:
    """Raise :class:`InputError` (``<group>: unknown choice 'x'; choices: ...``) for an override that selects an
    option a config group of ``hydra_configs/`` does not have. Other overrides are left to Hydra.

    Args:
        config_name: the primary config (``retrieve``, ``train``, ...), named in the message of a bad override.
        overrides: Hydra override strings (``method=nope``, ``+experiment=x``, ``llm=none,local``).
        root: the config folder (default: :func:`config_dir`).
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    root = root or config_dir()
    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except HydraException as err:
        raise InputError(f"cannot parse the overrides of {config_name}.yaml: {one_line(err)}",
                         field="overrides") from None
    for override in parsed:
        group = override.key_or_group
        if override.is_delete() or group.startswith("hydra") or not (root / group).is_dir():
            continue
        for value in _values(override):
            if not (root / group / f"{value}.yaml").is_file():
                choices = group_choices(group, root)
                raise InputError(f"unknown choice {value!r}; choices: {', '.join(choices)}", setting=group)


__all__ = ["check_choices", "config_dir", "group_choices", "one_line"]
