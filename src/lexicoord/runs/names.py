"""Run names: the one alphabet a run name may use, and the folders named after runs.

A run name becomes a database key (128 characters at most) and a folder under
``reports/``, so it is checked where it enters: letters, digits, ``.``, ``_``
and ``-``, starting with a letter or digit, at most 100 characters. No name can
then hold a path separator, be ``.`` or ``..``, or carry a newline. Folders
named after a run are built by :func:`run_folder`, which also copes with names
stored before the check existed and refuses any path that would leave its base.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from lexicoord.errors import ConfigError

MAX_RUN_NAME = 100
RUN_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_RUN_NAME - 1}}}")
RULE = f"1 to {MAX_RUN_NAME} letters, digits, '.', '_' or '-', starting with a letter or digit"


def check_run_name(name: str) -> str:
    """``name`` if it is a valid run name; otherwise a :class:`ConfigError` saying the rule."""
    if not RUN_NAME.fullmatch(name):
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise ConfigError(f"Run name {shown!r} is not allowed: use {RULE}.")
    return name


def run_folder(base: Path, run_id: str) -> Path:
    """``base / run_id``, never outside ``base``: a name that is not a valid run name (stored by an older
    release) becomes a safe slug with a short hash, so two such names never share a folder."""
    part = run_id
    if not RUN_NAME.fullmatch(run_id):
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", run_id).strip(".-")[:60] or "run"
        part = f"{slug}-{hashlib.sha256(run_id.encode()).hexdigest()[:8]}"
    folder = base / part
    if folder.resolve().parent != base.resolve():
        raise ConfigError(f"The folder for run {run_id!r} would leave {base}.")
    return folder


#: Where reports go unless ``--out`` says otherwise.
REPORTS = Path("reports")


def report_folder(run_id: str) -> Path:
    """``reports/RUN``, built so that it stays under ``reports/``."""
    return run_folder(REPORTS, run_id)
