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
A multirun (``-m``) is checked on jobs that cover its sweep: every value of every swept key (the command line's and
the experiment's ``hydra.sweeper.params``) is composed and resolved in at least one job.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from hyperrag.config.choices import check_choices, one_line
from hyperrag.config.compose import compose_config, hydra_context
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
    with hydra_context():
        jobs = _multirun_jobs(config_name, list(args.overrides)) if args.multirun else [list(args.overrides)]
        for overrides in jobs:
            _check_job(config_name, overrides)


def _check_job(config_name: str, overrides: list[str]) -> None:
    """Compose one job's config and resolve every interpolation of it."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        cfg = compose_config(config_name, overrides)
    except (HydraException, OmegaConfBaseException) as err:
        raise InputError(f"cannot compose {config_name}.yaml: {one_line(err)}", field="overrides") from None
    check_interpolations(cfg)


def _multirun_jobs(config_name: str, overrides: list[str]) -> list[list[str]]:
    """Override lists covering a multirun's jobs: every value of every swept key (the command line's sweeps and the
    ``hydra.sweeper.params`` its config sets, the command line winning a shared key, as Hydra's basic sweeper
    merges them) appears in at least one list, each with every fixed override. Not every combination: a sweep's
    size is a product, and composing a job takes ~0.3 s."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    def cover(strings: list[str]) -> list[list[str]]:
        values: dict[str, list[str]] = {}
        for override in parser.parse_overrides(strings):
            key = override.get_key_element()
            if override.is_discrete_sweep():
                values[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
            else:
                values[key] = [f"{key}={override.get_value_element_as_str()}"]
        width = max((len(v) for v in values.values()), default=1)
        return [[v[i % len(v)] for v in values.values()] for i in range(width)]

    jobs: list[list[str]] = []
    try:
        with hydra_context() as loader:
            parser = OverridesParser.create(config_loader=loader)
            for combination in cover(overrides):
                params = OmegaConf.select(compose_config(config_name, combination, hydra_node=True),
                                          "hydra.sweeper.params") or {}
                jobs += [job for job in cover([f"{k}={v}" for k, v in params.items()] + combination)
                         if job not in jobs]
    except (HydraException, OmegaConfBaseException) as err:
        raise InputError(f"cannot compose {config_name}.yaml: {one_line(err)}", field="overrides") from None
    return jobs


__all__ = ["check_command_line"]
