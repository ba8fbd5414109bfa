"""How reports print numbers: a dash for what could not be computed, never a zero that was not measured."""

from __future__ import annotations


def num(x: float | None, fmt: str = ".2f") -> str:
    return "–" if x is None else format(x, fmt)


def pct(x: float | None, sign: str = "%") -> str:
    """A rate as a percentage with one decimal (``sign=""`` where the column says it is a percentage)."""
    return "–" if x is None else f"{100 * x:.1f}{sign}"
