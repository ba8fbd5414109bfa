"""How long a process's hold on an episode lasts without renewal (see runs/claims.py).

Its own module because both the claims and the store read it: the store to tell a run still being
played from one whose processes died without a word."""

from __future__ import annotations

import os

from lexicoord.errors import ConfigError

#: How long a claim lasts without renewal: how long a killed process's episodes wait before another
#: process plays them again. Renewal runs at a quarter of it.
DEFAULT_LEASE = 60.0


def lease_from_env() -> float:
    """``LEXICOORD_CLAIM_SECONDS``, else :data:`DEFAULT_LEASE`."""
    raw = os.environ.get("LEXICOORD_CLAIM_SECONDS")
    if not raw:
        return DEFAULT_LEASE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ConfigError(f"LEXICOORD_CLAIM_SECONDS must be a positive number of seconds, not {raw!r}.")
    return value
