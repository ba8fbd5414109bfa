"""JSONL task files, validated line by line against a pydantic model.

Loading never drops a line silently: every bad line is reported with its line
number and the reason, and the load fails unless the caller asks to keep going.
Every task kind (ambiguous words, robot instructions, a user's own file) loads
through here, so they all fail the same readable way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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


def parse_jsonl(
    lines: list[str], source: str, model: type[M] | Callable[[dict[str, Any]], M], *, keep_going: bool = False
) -> tuple[list[M], list[LineError]]:
    """Items and bad lines; ids must be unique. Raises :class:`DatasetError` on any bad line unless ``keep_going``.

    ``model`` is a pydantic model, or a function that validates one line's object into one.
    """
    validate = model.model_validate if _is_model_class(model) else model
    items: list[M] = []
    errors: list[LineError] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(LineError(line=number, reason=f"not valid JSON ({exc.msg})"))
            continue
        if not isinstance(data, dict):
            errors.append(LineError(line=number, reason="not a JSON object"))
            continue
        try:
            item = validate(data)
        except ValidationError as exc:
            errors.append(LineError(line=number, reason=validation_reason(exc)))
            continue
        key = str(getattr(item, "id", number))
        if key in seen:
            errors.append(LineError(line=number, reason=f"id {key!r} repeats line {seen[key]}"))
            continue
        seen[key] = number
        items.append(item)
    if errors and not keep_going:
        raise DatasetError(source, errors)
    if not items and not errors:
        raise ConfigError(f"{source} holds no items.")
    return items, errors


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file, or a :class:`ConfigError` that says which line is not text."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read the dataset {path}: {exc.strerror}.") from None
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(f"The dataset {path} is not UTF-8 text (line {line}: {exc.reason}).") from None
    return text.splitlines()
