"""How reports print numbers: a dash for what could not be computed, never a zero that was not measured."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lexicoord.analysis.intervals import Interval


def num(x: float | None, fmt: str = ".2f") -> str:
    return "–" if x is None else format(x, fmt)


def pct(x: float | None, sign: str = "%") -> str:
    """A rate as a percentage with one decimal (``sign=""`` where the column says it is a percentage)."""
    return "–" if x is None else f"{100 * x:.1f}{sign}"


def ci(interval: Interval | None, fmt: str = ".2f") -> str:
    """`` [low, high]`` after a mean (nothing where there is no interval), in the mean's own format."""
    return "" if interval is None else f" [{format(interval.low, fmt)}, {format(interval.high, fmt)}]"
