"""Where the commands print: rich's console, at the terminal's width at a terminal and uncut anywhere else.

Rich lays text out for 80 columns when its stream is not a terminal, so a report's table written to a file or a
pipe (a cluster job's log, ``| less``, ``> out.txt``) had its URLs, model names and store paths folded mid-word,
and a folded path cannot be pasted back. Off a terminal the width is :data:`WIDE` instead (``COLUMNS`` still
wins when set), so every line keeps its whole text; at a terminal nothing changes.
"""

from __future__ import annotations

import os
import sys

from rich.console import Console

#: The width written off a terminal: wide enough that no table, path or URL is folded.
WIDE = 4096


def console_for(stderr: bool = False) -> Console:
    """A console on standard output (or error) that folds lines only at a terminal's own width."""
    stream = sys.stderr if stderr else sys.stdout
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        terminal = False
    wide = not terminal and not os.environ.get("COLUMNS")
    return Console(stderr=stderr, width=WIDE if wide else None)
