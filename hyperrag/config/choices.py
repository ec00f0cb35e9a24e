"""Config-group choices checked before Hydra composes: ``method=nope`` stops with one line naming the group and
its choices, exit 2, like every other bad setting (Hydra's own report is a paragraph and exit 1).

    python retrieve.py method=nope
    error: method: unknown choice 'nope'; choices: bm25, catrag, cdfrag, dense, ...

:func:`check_choices` checks a list of overrides (the compose API's callers: :func:`~hyperrag.config.compose_config`,
the Python API, ``python -m hyperrag.index``); :func:`check_command_line` is what the entry points
(``retrieve.py``, ``train.py``, ``evaluate.py``, ``report.py``) run on their command line before ``hydra.main``.
It also composes a single run's config once, so that any other override Hydra refuses (a key the config does not
have: ``report.py method=x``) stops with one line too; multirun sweeps are checked choice by choice.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hyperrag.errors import InputError, exit_on_input_error

# Hydra flags that change where configs come from: the check leaves such command lines to Hydra.
_CONFIG_SOURCE_FLAGS = ("config_path", "config_name", "config_dir", "experimental_rerun")


def one_line(err: BaseException) -> str:
    """Hydra's message on one line (it puts its hint, e.g. ``To append to your config use +key=value``, on a
    second)."""
    return " ".join(line.strip() for line in str(err).splitlines() if line.strip())


def group_choices(group: str, root: Path | None = None) -> list[str]:
    """The options of config group ``group`` (``hydra_configs/<group>/*.yaml``, sub-folders as ``sub/name``)."""
    from hyperrag.config.compose import config_dir

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
        root: the config folder (default: :func:`~hyperrag.config.compose.config_dir`).
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    from hyperrag.config.compose import config_dir

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


def _hydra_arguments(argv: Sequence[str]) -> Any:
    """Hydra's own parse of an entry point's command line (its flags and overrides)."""
    import contextlib
    import io

    from hydra._internal.utils import get_args_parser

    with contextlib.redirect_stderr(io.StringIO()):  # a malformed command line: Hydra's parser says so afterwards
        return get_args_parser().parse_args(list(argv))


def check_command_line(config_name: str, argv: Sequence[str] | None = None) -> None:
    """What an entry point runs before ``hydra.main``: a bad choice or override on ``argv`` (default
    ``sys.argv[1:]``) prints one line and exits 2. Command lines that name another config source
    (``--config-dir``, ``--config-name``, ...), ask for help, or make no override are left to Hydra."""
    exit_on_input_error(_check_command_line)(config_name, sys.argv[1:] if argv is None else argv)


def _check_command_line(config_name: str, argv: Sequence[str]) -> None:
    try:
        args = _hydra_arguments(argv)
    except SystemExit:  # malformed: left to Hydra's own parser, which reports it
        return
    if args.help or args.hydra_help or args.info or args.shell_completion or not args.overrides or any(
            getattr(args, flag, None) for flag in _CONFIG_SOURCE_FLAGS):
        return
    check_choices(config_name, args.overrides)
    if args.multirun:
        return
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from hyperrag.config.compose import compose_config

    try:
        compose_config(config_name, list(args.overrides))
    except (HydraException, OmegaConfBaseException) as err:
        raise InputError(f"cannot compose {config_name}.yaml: {one_line(err)}", field="overrides") from None


__all__ = ["check_choices", "check_command_line", "group_choices", "one_line"]
