"""Typed settings checked when a config is composed: one line naming the bad setting, exit code 2.

Every method and component declares its settings as a :func:`settings` class (a frozen pydantic dataclass):
field types say what a value may be (``PositiveInt``, ``Probability``, ``Literal[...]``), and there are no
defaults — ``hydra_configs/`` holds the only values (tests and scripts compose them with
:func:`hyperrag.config.method_settings`). A bad value stops with an :class:`~hyperrag.errors.InputError`:

    error: method.retriever.train.batch_size: must be >= 1, got 0

:func:`check_config` checks a composed config before anything is built: every ``_target_`` node whose target
is a settings class, and every constrained argument (``Annotated`` / ``Literal`` / settings-typed) of any
other target (a Lightning module, a data module, a training task).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic.dataclasses import is_pydantic_dataclass
from typing_extensions import is_typeddict

from hyperrag.errors import InputError

T = TypeVar("T")

PositiveInt = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
#: a probability, share or fraction in [0, 1] (damping, thresholds on normalised scores, mixing weights)
Probability = Annotated[float, Field(ge=0, le=1)]
#: a cosine-similarity threshold
Cosine = Annotated[float, Field(ge=-1, le=1)]

_HYDRA_KEYS = ("_target_", "_partial_", "_convert_", "_recursive_", "_args_")


def plain(value: Any) -> Any:
    """OmegaConf containers → plain dicts / lists (Hydra passes ``DictConfig`` to what it instantiates). An
    interpolation naming a key the config lacks raises :class:`InputError` (see :func:`check_interpolations`)."""
    from omegaconf import DictConfig, ListConfig, OmegaConf
    from omegaconf.errors import InterpolationKeyError

    if isinstance(value, (DictConfig, ListConfig)):
        try:
            return OmegaConf.to_container(value, resolve=True)
        except InterpolationKeyError:
            check_interpolations(value._get_root())  # names the setting; what it cannot name is re-raised
            raise
    return value


# ${<table>.${<selector>}<rest>}: the value of the setting <selector> picks an entry of the mapping <table>
_SELECTION = re.compile(r"\$\{([\w.\-]*)\$\{([\w][\w.\-]*)\}([\w.\-]*)\}")


def _interpolation_error(cfg: Any, where: str, raw: str, err: Exception) -> InputError:
    """One line for an interpolation of ``cfg`` at ``where`` (raw text ``raw``) that names a missing key: when
    the key was picked by another setting's value (``${method.variants.${method.retriever.variant}.x}``), that
    setting with the entries it may name; otherwise the interpolation and OmegaConf's reason."""
    from omegaconf import DictConfig, OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    for table_key, selector, _ in _SELECTION.findall(raw):
        try:
            chosen = OmegaConf.select(cfg, selector, throw_on_missing=True)
            table = OmegaConf.select(cfg, table_key.rstrip(".")) if table_key.strip(".") else cfg
        except OmegaConfBaseException:
            continue
        if isinstance(table, DictConfig) and chosen is not None and str(chosen) not in table:
            choices = ", ".join(sorted(str(k) for k in table))
            return InputError(f"unknown choice {chosen!r}; choices: {choices} (the entries of {table_key.strip('.')})",
                              setting=selector)
    reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return InputError(f"{raw} cannot be resolved: {reason}", setting=where)


def check_interpolations(cfg: Any, path: str = "") -> None:
    """Resolve every interpolation of the composed config ``cfg`` (before anything is built); one that names a
    key the config lacks raises :class:`InputError`, naming the setting whose value picked the key
    (``method.retriever.variant: unknown choice 'paperr'; choices: authors_code, paper``) or else the
    interpolated setting. Interpolations that fail for another reason (an unset environment variable, Hydra's
    run-time values) are left to the code that reads them.
    """
    from omegaconf import DictConfig, ListConfig, OmegaConf
    from omegaconf.errors import InterpolationKeyError, OmegaConfBaseException

    root = cfg
    todo: list[tuple[Any, str]] = [(cfg, path)]
    while todo:
        node, prefix = todo.pop()
        keys = list(node.keys()) if isinstance(node, DictConfig) else list(range(len(node)))
        for key in keys:
            where = f"{prefix}[{key}]" if isinstance(key, int) else (f"{prefix}.{key}" if prefix else str(key))
            if OmegaConf.is_missing(node, key):
                continue
            if OmegaConf.is_interpolation(node, key):
                try:
                    node[key]
                except InterpolationKeyError as err:
                    raw = str(node._get_node(key)._value())
                    raise _interpolation_error(root, where, raw, err) from None
                except OmegaConfBaseException:
                    continue
                continue
            child = node[key]
            if isinstance(child, (DictConfig, ListConfig)):
                todo.append((child, where))


def _plain_arguments(cls: type, data: Any) -> Any:
    from pydantic_core import ArgsKwargs

    if isinstance(data, ArgsKwargs):
        kwargs = {k: plain(v) for k, v in (data.kwargs or {}).items()}
        return ArgsKwargs(tuple(plain(a) for a in data.args), kwargs)
    return plain(data)


def settings(cls: type[T]) -> type[T]:
    """Make ``cls`` a settings class: frozen, unknown fields refused, every field type checked on construction
    (nested settings classes from plain or OmegaConf dicts). Change one with :func:`dataclasses.replace`."""
    before = model_validator(mode="before")(classmethod(_plain_arguments))
    cls._plain_arguments = before  # type: ignore[attr-defined]
    return pydantic_dataclass(frozen=True, config=ConfigDict(extra="forbid"))(cls)


def as_dict(obj: Any) -> dict[str, Any]:
    """A settings object as a plain dict (nested settings as dicts): for keys, manifests, ``describe()``."""
    return dataclasses.asdict(obj)


# ---- error lines -------------------------------------------------------------------------------------------
_BOUNDS = {"greater_than_equal": (">=", "ge"), "greater_than": (">", "gt"), "less_than_equal": ("<=", "le"),
           "less_than": ("<", "lt")}


def _problem(err: Mapping[str, Any]) -> str:
    """What is wrong, without the value (``must be >= 1``)."""
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _BOUNDS:
        op, key = _BOUNDS[kind]
        return f"must be {op} {ctx[key]}"
    if kind == "literal_error":
        return f"must be one of {ctx['expected']}"
    if kind in ("unexpected_keyword_argument", "extra_forbidden"):
        return "unknown setting"
    if kind in ("missing", "missing_argument"):
        return "missing (give it a value in the config)"
    msg = str(err["msg"])
    return f"{msg[:1].lower()}{msg[1:]}"


_NO_VALUE = ("unexpected_keyword_argument", "extra_forbidden", "missing", "missing_argument")

# pydantic names the member of a union a value failed in its error location (``constrained-int``, ``int``)
_UNION_TAGS = frozenset({"int", "float", "bool", "str", "none", "list", "dict", "tuple"})


def _field_path(loc: Sequence[Any]) -> tuple[Any, ...]:
    """The error location without union-member tags and dict-key markers."""
    return tuple(p for p in loc if isinstance(p, int) or not (
        p == "[key]" or p in _UNION_TAGS or "-" in p or "[" in p))


def _where(prefix: str, path: Sequence[Any]) -> str:
    out = prefix
    for p in path:
        out = f"{out}[{p}]" if isinstance(p, int) else (f"{out}.{p}" if out else str(p))
    return out


def input_error(err: ValidationError, prefix: str = "", *, skip_missing: bool = False) -> InputError | None:
    """The first bad setting of a pydantic error as one :class:`InputError` line ``<prefix>.<field>:
    <problem>, got <value>`` (a value a union refused gets every member's problem: ``must be >= 1 or must be
    > 0.0``)."""
    errors = [e for e in err.errors() if not (skip_missing and e["type"] in ("missing", "missing_argument"))]
    if not errors:
        return None
    path = _field_path(errors[0]["loc"])
    problems = list(dict.fromkeys(_problem(e) for e in errors if _field_path(e["loc"]) == path))
    message = " or ".join(problems)
    if errors[0]["type"] not in _NO_VALUE:
        message += f", got {errors[0].get('input')!r}"
    return InputError(message, setting=_where(prefix, path))


def validate(kind: Any, value: Any, where: str, *, partial: bool = False) -> Any:
    """``value`` checked against ``kind`` (a settings class or a constrained type); raises :class:`InputError`
    naming ``where``. ``partial``: missing fields are not errors (a Hydra ``_partial_`` node)."""
    try:
        return TypeAdapter(kind).validate_python(plain(value))
    except ValidationError as err:
        found = input_error(err, where, skip_missing=partial)
        if found is not None:
            raise found from None
        return value


# ---- checking a composed config ----------------------------------------------------------------------------
def _constrained(hint: Any) -> bool:
    """Whether a type says more than its Python type: bounds, allowed values, settings, a TypedDict."""
    if get_origin(hint) in (Annotated, Literal) or is_pydantic_dataclass(hint) or is_typeddict(hint):
        return True
    return any(_constrained(a) for a in get_args(hint))


def _hints(target: Callable[..., Any]) -> dict[str, Any]:
    """Argument types of a class's ``__init__`` or of a function (unresolvable ones left out)."""
    fn = target.__init__ if isinstance(target, type) else target  # type: ignore[misc]
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except (NameError, AttributeError, TypeError):  # an unresolvable annotation (a TYPE_CHECKING import)
        pass
    out = {}  # resolve the others one by one, each in the function's module
    module = getattr(fn, "__module__", None)
    for name, ann in getattr(fn, "__annotations__", {}).items():
        holder = type("_Annotation", (), {"__annotations__": {name: ann}, "__module__": module})
        with contextlib.suppress(NameError, AttributeError, TypeError, SyntaxError):
            out[name] = typing.get_type_hints(holder, include_extras=True)[name]
    return out


def check_config(node: Any, path: str) -> None:
    """Check every ``_target_`` node under ``node`` (a composed DictConfig at ``path``) before instantiation.

    Settings classes are checked whole (missing fields allowed under ``_partial_: true``); other targets have
    their constrained arguments checked. Interpolated values are checked where they point to. Raises
    :class:`~hyperrag.errors.InputError` naming the full key, e.g. ``task.datamodule.batch_size``.
    """
    from hydra.utils import get_object
    from omegaconf import DictConfig, OmegaConf

    if not isinstance(node, DictConfig):
        return
    keys = [k for k in node if not OmegaConf.is_interpolation(node, k)]
    target = node.get("_target_") if "_target_" in node else None
    if target is None:
        for k in keys:
            check_config(node[k], f"{path}.{k}" if path else str(k))
        return
    obj = get_object(str(target))
    partial = bool(node.get("_partial_", False))
    if is_pydantic_dataclass(obj):
        args = {k: node[k] for k in node if k not in _HYDRA_KEYS}
        validate(obj, args, path, partial=partial)
        return
    hints = _hints(obj)
    for k in keys:
        if k in _HYDRA_KEYS:
            continue
        where = f"{path}.{k}"
        value = node[k]
        if isinstance(value, DictConfig) and "_target_" in value:
            check_config(value, where)
        elif k in hints and _constrained(hints[k]):
            validate(hints[k], value, where)
        else:
            check_config(value, where)


def check_keys(cfg: Any, schema: type, prefix: str = "") -> Any:
    """Check the keys of ``cfg`` that the settings class ``schema`` names (e.g. an entry point's top-level run
    settings); returns the validated ``schema`` object."""
    names = [f.name for f in dataclasses.fields(schema)]
    return validate(schema, {n: cfg.get(n) for n in names}, prefix)


__all__ = ["Cosine", "NonNegativeFloat", "NonNegativeInt", "PositiveFloat", "PositiveInt", "Probability",
           "as_dict", "check_config", "check_interpolations", "check_keys", "input_error", "plain", "settings",
           "validate"]
