"""CSV cells a spreadsheet will show as text: exported cells hold text people and models wrote."""

from __future__ import annotations

from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """Text a spreadsheet would run as a formula, prefixed with an apostrophe; anything else as it is."""
    if isinstance(value, str) and value[:1] in FORMULA_STARTS:
        return "'" + value
    return value
