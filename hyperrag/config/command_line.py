"""What the entry points (``retrieve.py``, ``train.py``, ``evaluate.py``, ``report.py``) run on their command line
before ``hydra.main``: a bad choice, override or interpolation stops with one line and exit code 2, like every
other bad setting (Hydra's and OmegaConf's own reports are a paragraph or a traceback and exit 1).

    python retrieve.py method=nope
    error: method: unknown choice 'nope'; choices: bm25, catrag, cdfrag, dense, ...
    python retrieve.py method=catrag method.retriever.variant=paperr
    error: method.retriever.variant: unknown choice 'paperr'; choices: authors_code, paper

Choices are checked first (:func:`~hyperrag.config.choices.check_choices`); then a single run's config is composed
once, so that any other override Hydra refuses (a key the config does not have: ``report.py method=x``) stops with
one line too, and every interpolation of it is resolved
(:func:`~hyperrag.config.validation.check_interpolations`), so that a value that selects an entry by a key the
config lacks (``${method.variants.${method.retriever.variant}.boost_beta}``) names the setting and its choices.
Multirun sweeps are checked choice by choice.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hyperrag.config.choices import check_choices, one_line
from hyperrag.config.compose import compose_config
from hyperrag.config.validation import check_interpolations
from hyperrag.errors import InputError, exit_on_input_error

# Hydra flags that change where configs come from: the check leaves such command lines to Hydra.
_CONFIG_SOURCE_FLAGS = ("config_path", "config_name", "config_dir", "experimental_rerun")


def _hydra_arguments(argv: Sequence[str]) -> Any:
    """Hydra's own parse of an entry point's command line (its flags and overrides)."""
    import contextlib
    import io

    from hydra._internal.utils import get_args_parser

    with contextlib.redirect_stderr(io.StringIO()):  # a malformed command line: Hydra's parser says so afterwards
        return get_args_parser().parse_args(list(argv))


def check_command_line(config_name: str, argv: Sequence[str] | None = None) -> None:
    """What an entry point runs before ``hydra.main``: a bad choice, override or interpolation on ``argv``
    (default ``sys.argv[1:]``) prints one line and exits 2. Command lines that name another config source
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

    try:
        cfg = compose_config(config_name, list(args.overrides))
    except (HydraException, OmegaConfBaseException) as err:
        raise InputError(f"cannot compose {config_name}.yaml: {one_line(err)}", field="overrides") from None
    check_interpolations(cfg)


__all__ = ["check_command_line"]
