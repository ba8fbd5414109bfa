"""Reading a run once, as a stream.

A report turns every ended episode into a small summary as the episodes stream from the store
(:meth:`~lexicoord.runs.store.Store.iter_run_events`, a page at a time), so it holds summaries, never a run's
events. What a report counts of the failed episodes needs only their records, kept as the stream goes by.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from lexicoord.core.events import Event
from lexicoord.runs.records import EpisodeRecord

#: An ended episode and its events, as the store gives them.
Row = tuple[EpisodeRecord, list[Event]]


def keeping_failed(rows: Iterable[Row]) -> tuple[Iterator[Row], list[EpisodeRecord]]:
    """The same rows, once, and the list that fills with the records of the failed ones as they pass."""
    failed: list[EpisodeRecord] = []

    def stream() -> Iterator[Row]:
        for record, events in rows:
            if record.status == "failed":
                failed.append(record)
            yield record, events

    return stream(), failed
