"""An experiment file as data: TOML read by the standard library, ``${VAR}`` filled from the environment,
``--set`` overrides applied, and every key's line kept so that a problem is reported where it is written.

``tomllib`` gives values, not positions; :func:`key_lines` reads the lines of keys and table headers itself
(the subset of TOML an experiment file uses: tables, arrays of tables, dotted and quoted keys), so that an
error about ``settings.rounds`` names the line a person would edit.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lexicoord.errors import ConfigError

#: ``${NAME}`` or ``${NAME:-default}``: shell-like, so a file reads the way a launcher script does.
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_ONE = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_DOTTED = rf"{_ONE}(?:\s*\.\s*{_ONE})*"
_TABLE = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART = re.compile(_ONE)

Path_ = tuple[str | int, ...]


class Problem(BaseModel):
    """One thing wrong with a file: where (a line, or the override it came from) and what, in one sentence."""

    where: str
    text: str

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


class ExperimentError(ConfigError):
    """Every problem of an experiment file, one sentence each; nothing was run."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _parts(dotted: str) -> list[str]:
    return [p.strip("\"'") for p in _PART.findall(dotted)]


def key_lines(text: str) -> dict[Path_, int]:
    """The line (from 1) where each key or table of ``text`` is written, by its path (array entries by index)."""
    lines: dict[Path_, int] = {}
    arrays: dict[Path_, int] = {}
    table: Path_ = ()
    for number, line in enumerate(text.splitlines(), start=1):
        head = _TABLE.match(line)
        if head:
            name: Path_ = tuple(_parts(head.group(2)))
            if head.group(1) == "[[":
                arrays[name] = arrays.get(name, -1) + 1
                name = (*name, arrays[name])
            table = name
            lines.setdefault(table, number)
            continue
        key = _KEY.match(line)
        if key:
            lines.setdefault((*table, *_parts(key.group(1))), number)
    return lines


class Source:
    """A file's values and the lines of its keys; overrides are remembered so that problems name them."""

    def __init__(self, path: Path, data: dict[str, Any], lines: dict[Path_, int], text: str) -> None:
        self.path = path
        self.data = data
        self.lines = lines
        self.text = text
        self.overridden: dict[Path_, str] = {}
        #: The folder a relative data path in the file is read from (the file's own; none for a command line).
        self.base: Path | None = None
        #: Problems found while reading (an unset variable), reported with the checks' own, and the keys they are at.
        self.problems: list[Problem] = []
        self.unset: set[Path_] = set()

    def where(self, path: Sequence[str | int]) -> str:
        """``file:line`` of the closest written key on ``path`` (an override names itself)."""
        for n in range(len(path), 0, -1):
            key = tuple(path[:n])
            if key in self.overridden:
                return f"--set {self.overridden[key]}"
            if key in self.lines:
                return f"{self.path}:{self.lines[key]}"
        return str(self.path)


def read(path: Path, environ: Mapping[str, str] | None = None, what: str = "experiment file") -> Source:
    """The file's values with ``${VAR}`` filled; a syntax error is an :class:`ExperimentError`, an unset variable
    one of the source's ``problems`` (told with the file's other problems)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"No {what} at {path}.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"The {what} {path} cannot be read ({exc}).") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        where = f"{path}:{found.group(1)}" if found else str(path)
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "not valid TOML"
        raise ExperimentError([Problem(where=where, text=f"not valid TOML: {reason}.")]) from None
    source = Source(path, data, key_lines(text), text)
    source.base = path.parent
    source.data = _filled(data, (), os.environ if environ is None else environ, source)
    return source


def _filled(value: Any, path: Path_, env: Mapping[str, str], source: Source) -> Any:
    if isinstance(value, dict):
        return {k: _filled(v, (*path, k), env, source) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, (*path, i), env, source) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def fill(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env and env[name] != "":
            return env[name]
        if default is not None:
            return default
        source.unset.add(path)
        source.problems.append(Problem(where=source.where(path), text=f"{name} is not set and the file gives no "
                                       f"default (export {name}=... or write ${{{name}:-default}})."))
        return match.group(0)

    return VARIABLE.sub(fill, value)


def parse_override(text: str) -> tuple[list[str], Any]:
    """``key.path=value``: the value read as a TOML value (number, boolean, string in quotes, list) or, failing
    that, as the text itself, so ``--set models.a=vllm/Qwen/Qwen2.5-7B`` needs no quotes."""
    key, sep, raw = text.partition("=")
    parts = _parts(key)
    if not sep or not parts or "".join(parts).strip() == "":
        raise ExperimentError([Problem(where=f"--set {text}", text="an override is key.path=value.")])
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return parts, value


def apply_overrides(source: Source, overrides: Sequence[str]) -> None:
    """Each ``key.path=value`` set into the file's values (tables made as needed), in order."""
    for text in overrides:
        parts, value = parse_override(text)
        node: Any = source.data
        for i, part in enumerate(parts[:-1]):
            nxt = node.get(part) if isinstance(node, dict) else None
            if nxt is None:
                nxt = node[part] = {}
            if not isinstance(nxt, dict):
                raise ExperimentError([Problem(where=f"--set {text}",
                                               text=f"{'.'.join(parts[:i + 1])} is not a table.")])
            node = nxt
        node[parts[-1]] = value
        source.overridden[tuple(parts)] = text
