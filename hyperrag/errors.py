"""User-facing errors: one line naming the file, line and field; exit code 2, no traceback."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

INPUT_ERROR_EXIT_CODE = 2

F = TypeVar("F", bound=Callable[..., Any])


class InputError(ValueError):
    """Bad user input (a data file, a query file, a config value).

    Args:
        message: what is wrong, in words a user can act on.
        path: the offending file, if any.
        line: 1-based line number (JSONL) or 1-based record number (JSON lists).
        field: the offending field name.
        record: 0-based index of the offending record in a JSON list file.
        setting: the offending config key, in full (``method.retriever.train.batch_size``).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
        record: int | None = None,
        setting: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.record = record
        self.setting = setting
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        if self.record is not None:
            where += f"record {self.record}: "
        field = f"field '{self.field}': " if self.field else ""
        setting = f"{self.setting}: " if self.setting else ""
        return f"{where}{field}{setting}{self.message}"


def find_input_error(err: BaseException | None) -> InputError | None:
    """The :class:`InputError` in an exception chain (Hydra's instantiate wraps what it calls)."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, InputError):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def exit_on_input_error(func: F) -> F:
    """Decorator for entry points: an :class:`InputError` prints one line and exits with code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as err:
            cause = find_input_error(err)
            if cause is None:
                raise
            print(f"error: {cause.one_line()}", file=sys.stderr)
            sys.exit(INPUT_ERROR_EXIT_CODE)

    return wrapper  # type: ignore[return-value]
