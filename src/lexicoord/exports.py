"""Names a package offers that are imported only when first used.

``lexicoord --help`` reads each protocol's name and summary from its package, and a protocol's package re-exports
its rules: imported eagerly, listing the commands imported every protocol's rules, its prompts and their
dependencies, a quarter of a second before anything was printed, and the report of one protocol's run loaded
all the others. A package instead says where each name lives (``__getattr__ = lazy(__name__, {...})``, with the
same names imported under ``TYPE_CHECKING`` so that mypy sees their types), and the module is imported the first
time the name is read.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``where`` maps a name to the submodule that defines it."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{where[name]}"), name)

    return __getattr__
