"""Typed, validated settings whose values live in ``hydra_configs/`` only (see :mod:`.validation`)."""

from hyperrag.config.choices import config_dir
from hyperrag.config.compose import (
    compose_config,
    config_arguments,
    configured,
    method_settings,
    task_arguments,
)
from hyperrag.config.validation import (
    Cosine,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
    as_dict,
    check_config,
    check_keys,
    settings,
    validate,
)

__all__ = ["Cosine", "NonNegativeFloat", "NonNegativeInt", "PositiveFloat", "PositiveInt", "Probability",
           "as_dict", "check_config", "check_keys", "compose_config", "config_arguments", "config_dir", "configured",
           "method_settings", "settings", "task_arguments", "validate"]
