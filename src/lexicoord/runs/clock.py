"""The database's clock, for every time that machines compare: claim leases and their expiry.

A lease written by one machine is read by another. Stamped and compared with each machine's own clock, two
machines whose clocks differ by minutes (an NTP daemon stopped, a VM resumed) would read each other's live
claims as long expired and play the same episodes twice, or wait minutes on a dead process's. Stamped and
compared with the database server's clock, in the very statement that takes or renews a claim, every
process reads one time. SQLite is one machine's file, so its clock is that machine's, read by SQLite itself.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Float, func, literal_column, type_coerce


def db_now(dialect: str) -> ColumnElement[float]:
    """Seconds since the epoch, as the database server reads its own clock when the statement runs."""
    expression: ColumnElement[Any]
    if dialect == "postgresql":
        expression = func.extract("epoch", func.clock_timestamp())
    elif dialect == "sqlite":
        expression = literal_column("((julianday('now') - 2440587.5) * 86400.0)")
    else:  # any other database: its CURRENT_TIMESTAMP as epoch seconds where it can say so
        expression = func.extract("epoch", func.current_timestamp())
    return type_coerce(expression, Float)
