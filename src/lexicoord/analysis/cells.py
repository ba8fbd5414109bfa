"""Every CSV the project writes, through one writer whose cells a spreadsheet shows as text.

Exported cells hold text people and models wrote (item ids, options, justifications, coined terms); a cell
that starts like a formula (``=``, ``+``, ``-``, ``@``, a tab or a carriage return) would run as one in a
spreadsheet, so it is written with an apostrophe before it; a number (``-45``, ``-0.5``) is not a formula and
stays a number.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TextIO

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _number(text: str) -> bool:
    """Whether ``text`` is a plain number ("-45", "-0.5", "+3", "1e-3"): a spreadsheet reads it as one, runs nothing."""
    try:
        float(text)
    except ValueError:
        return False
    digits = text.lstrip("+-")
    return text.strip() == text and (digits[:1].isdigit() or digits.startswith("."))


def safe_cell(value: Any) -> Any:
    """Text a spreadsheet would run as a formula, prefixed with an apostrophe; a number written as text ("-45")
    stays a number; anything else as it is."""
    if isinstance(value, str) and value[:1] in FORMULA_STARTS and not _number(value):
        return "'" + value
    return value


def write_csv(target: Path | TextIO, head: Sequence[str] | None, rows: Iterable[Sequence[Any]]) -> None:
    """A header (None: none, for a format that has none) and rows, every cell made safe, to a file path (UTF-8)
    or an open text stream."""
    if isinstance(target, Path):
        with target.open("w", newline="", encoding="utf-8") as fh:
            write_csv(fh, head, rows)
        return
    writer = csv.writer(target)
    if head is not None:
        writer.writerow([safe_cell(h) for h in head])
    writer.writerows([safe_cell(v) for v in row] for row in rows)


def records_csv(path: Path, columns: Sequence[str], records: Iterable[dict[str, Any]]) -> None:
    """One row per record (a model dumped to a dict), the named columns in order."""
    write_csv(path, columns, ([r[c] for c in columns] for r in records))
