"""JSONL task files, validated line by line against a pydantic model.

Loading never drops a line silently: every bad line is reported with its line
number and the reason, and the load fails unless the caller asks to keep going.
Every task kind (ambiguous words, robot instructions, a user's own file) loads
through here, so they all fail the same readable way.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from lexicoord.errors import ConfigError

if TYPE_CHECKING:
    from typing_extensions import TypeIs  # typing.TypeIs needs Python 3.13


class LineError(BaseModel):
    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


class DatasetError(ConfigError):
    def __init__(self, source: str, errors: list[LineError]) -> None:
        self.errors = errors
        shown = "; ".join(str(e) for e in errors[:5])
        more = f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
        super().__init__(f"{source} has {len(errors)} bad line(s): {shown}{more}.")


M = TypeVar("M", bound=BaseModel)


def _is_model_class(model: type[M] | Callable[[dict[str, Any]], M]) -> TypeIs[type[M]]:
    """Whether ``model`` is a pydantic model class (validated with ``model_validate``), not a function."""
    return isinstance(model, type) and issubclass(model, BaseModel)


def validation_reason(exc: ValidationError) -> str:
    """The first problem of a validation error, as one line a person can act on."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def check_line(line: str, number: int, validate: Callable[[dict[str, Any]], M]) -> M | LineError | None:
    """One line as an item, or why it is not one (``None`` for a blank line)."""
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return LineError(line=number, reason=f"not valid JSON ({exc.msg})")
    if not isinstance(data, dict):
        return LineError(line=number, reason="not a JSON object")
    try:
        return validate(data)
    except ValidationError as exc:
        return LineError(line=number, reason=validation_reason(exc))


def line_validator(model: type[M] | Callable[[dict[str, Any]], M]) -> Callable[[dict[str, Any]], M]:
    return model.model_validate if _is_model_class(model) else model


def parse_jsonl(
    lines: Iterable[str], source: str, model: type[M] | Callable[[dict[str, Any]], M], *, keep_going: bool = False
) -> tuple[list[M], list[LineError]]:
    """Items and bad lines; ids must be unique. Raises :class:`DatasetError` on any bad line unless ``keep_going``.

    ``model`` is a pydantic model, or a function that validates one line's object into one.
    """
    validate = line_validator(model)
    items: list[M] = []
    errors: list[LineError] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        checked = check_line(line, number, validate)
        if checked is None:
            continue
        if isinstance(checked, LineError):
            errors.append(checked)
            continue
        key = str(getattr(checked, "id", number))
        if key in seen:
            errors.append(LineError(line=number, reason=f"id {key!r} repeats line {seen[key]}"))
            continue
        seen[key] = number
        items.append(checked)
    if errors and not keep_going:
        raise DatasetError(source, errors)
    if not items and not errors:
        raise ConfigError(f"{source} holds no items.")
    return items, errors


#: Caps on what a dataset file may hold, so that ``--dataset /dev/zero`` is refused instead of filling memory.
#: Override with ``LEXICOORD_MAX_DATASET_MB`` and ``LEXICOORD_MAX_LINE_KB``.
MAX_DATASET_MB = 512
MAX_LINE_KB = 1024


def _cap(variable: str, default: int) -> int:
    raw = os.environ.get(variable)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{variable} must be a whole number, not {raw!r}.") from None
    if value <= 0:
        raise ConfigError(f"{variable} must be positive, not {value}.")
    return value


def dataset_caps() -> tuple[int, int]:
    """The byte caps for a whole dataset file and for one line of it."""
    return _cap("LEXICOORD_MAX_DATASET_MB", MAX_DATASET_MB) * 2**20, _cap("LEXICOORD_MAX_LINE_KB", MAX_LINE_KB) * 2**10


def check_size(path: Path) -> None:
    """Refuse a regular file over the dataset cap before reading a byte of it."""
    total, _ = dataset_caps()
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ConfigError(f"Cannot read the dataset {path}: {exc.strerror}.") from None
    if path.is_file() and size > total:
        raise ConfigError(f"The dataset {path} is {size / 2**20:.0f} MB, over the {total // 2**20} MB cap "
                          "(set LEXICOORD_MAX_DATASET_MB to raise it).")


def read_lines(path: str | Path) -> Iterator[str]:
    """The lines of a UTF-8 text file, read one at a time under two caps (the whole file, one line); a line
    over its cap, a file over its cap, or bytes that are not UTF-8 stop the read with the line's number."""
    for _, _, text in numbered_lines(path):
        yield text


def numbered_lines(path: str | Path) -> Iterator[tuple[int, int, str]]:
    """Each line of :func:`read_lines` with its number and the byte offset it starts at."""
    path = Path(path)
    check_size(path)
    total, per_line = dataset_caps()
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise ConfigError(f"Cannot read the dataset {path}: {exc.strerror}.") from None
    read = 0
    with fh:
        for number in itertools.count(1):
            start = read
            try:
                raw = fh.readline(per_line + 1)
            except OSError as exc:
                raise ConfigError(f"Cannot read the dataset {path}: {exc.strerror}.") from None
            if not raw:
                return
            read += len(raw)
            if len(raw.rstrip(b"\r\n")) > per_line:
                raise ConfigError(f"Line {number} of the dataset {path} is longer than {per_line // 2**10} KB "
                                  "(set LEXICOORD_MAX_LINE_KB to raise the cap).")
            if read > total:
                raise ConfigError(f"The dataset {path} goes past the {total // 2**20} MB cap at line {number} "
                                  "(set LEXICOORD_MAX_DATASET_MB to raise it).")
            try:
                yield number, start, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise ConfigError(f"The dataset {path} is not UTF-8 text (line {number}: {exc.reason}).") from None
