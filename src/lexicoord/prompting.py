"""Prompts from files a user can read and edit, and user text fenced as data.

Text that comes from people or datasets (a sentence, a justification, a
clarifying statement) is placed inside a fence the prompt tells the model to
treat as data, so "ignore previous instructions" in a sentence stays a
sentence. The fence markers are stripped from the text itself, so it cannot
close its own fence.
"""

from __future__ import annotations

import os
import stat
import time
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from string import Template

from lexicoord.errors import ConfigError

#: Seconds a prompt, once read, is used without looking at its file again. A campaign renders thousands a minute,
#: and looking costs more than rendering; an edit made while a server or a run goes on applies within this.
FRESH = 1.0

FENCE_OPEN = "<<<"
FENCE_CLOSE = ">>>"


def fence(text: str, label: str = "DATA") -> str:
    """``text`` between markers that it cannot contain."""
    clean = text.replace(FENCE_OPEN, "‹‹‹").replace(FENCE_CLOSE, "›››")
    return f"{FENCE_OPEN}{label}\n{clean}\n{label}{FENCE_CLOSE}"


class Prompts:
    """The prompts of one package: a protocol's sit in its own ``prompts/`` folder, beside its rules.

    A file of the same name in ``$LEXICOORD_PROMPTS`` is read first, so a user edits any protocol's
    prompts in one folder without touching the installed package."""

    def __init__(self, package: str) -> None:
        self.package = package
        #: (user folder, name) -> the prompt's text and when its file was last looked at.
        self._known: dict[tuple[str | None, str], tuple[str, float]] = {}

    @cached_property
    def _own(self) -> Path:
        """The package's prompt folder: found once, since looking a package up costs more than reading a
        prompt (a live room renders several for every round)."""
        return Path(str(resources.files(self.package) / "prompts"))

    def dirs(self) -> list[Path]:
        """User prompt folder (``$LEXICOORD_PROMPTS``) first, then the package's."""
        dirs = []
        if os.environ.get("LEXICOORD_PROMPTS"):
            dirs.append(Path(os.environ["LEXICOORD_PROMPTS"]).expanduser())
        dirs.append(self._own)
        return dirs

    def load(self, name: str) -> str:
        """The prompt's text; its file is looked at again (one ``stat``) once :data:`FRESH` seconds have passed
        since the last look, and read again only when it changed."""
        user = os.environ.get("LEXICOORD_PROMPTS")
        now = time.monotonic()
        known = self._known.get((user, name))
        if known is not None and now - known[1] < FRESH:
            return known[0]
        for folder in self.dirs():
            path = folder / f"{name}.txt"
            try:
                found = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(found.st_mode):
                text = _read(path, found.st_mtime)
                self._known[(user, name)] = (text, now)
                return text
        raise ConfigError(f"Prompt '{name}.txt' not found in {', '.join(map(str, self.dirs()))}.")

    def render(self, name: str, **values: str) -> str:
        """Fill ``$placeholders`` of prompt ``name``; a missing value is an error, not a blank."""
        try:
            return Template(self.load(name)).substitute(**values)
        except KeyError as exc:
            raise ConfigError(f"Prompt '{name}' needs a value for ${exc.args[0]}.") from None


@lru_cache(maxsize=64)
def _read(path: Path, mtime: float) -> str:
    return path.read_text(encoding="utf-8")
