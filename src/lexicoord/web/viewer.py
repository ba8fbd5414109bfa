"""The run viewer: every stored run (campaigns and rooms) readable in the browser, page by page, read-only.

Pages: ``/runs`` (the runs), ``/runs/{run}`` (its episodes, filtered), ``/runs/{run}/episodes/{id}`` (one
transcript). JSON, all GET: ``/api/runs``, ``/api/runs/{run}``, ``/api/runs/{run}/episodes``,
``/api/runs/{run}/episodes/{id}``, ``.../events`` (a page), ``.../events/{seq}`` (one whole event) and
``.../board`` (the term board up to an event). Nothing else is routed, so any other method is refused.

It reads through a read-only handle on the store (:meth:`Store.read_only`), so browsing cannot change a
run, even one a campaign is still writing. It shows every seat's private events and prompts, so by
default it answers only browsers on this machine (from elsewhere: an SSH tunnel). The report is made
by ``lexicoord report RUN``, whose command the run's page shows: writing report files is not a
viewer's business.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import FileResponse

from lexicoord.core.events import load_event_types
from lexicoord.errors import LexicoordError
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import Store
from lexicoord.web.viewer_board import LEXICON_TYPES, board
from lexicoord.web.viewer_query import (
    EPISODES_MAX,
    EPISODES_PAGE,
    EVENTS_MAX,
    EVENTS_PAGE,
    RUNS_MAX,
    RUNS_PAGE,
    BadQuery,
    EpisodeFilter,
    episode_cursor,
    page_size,
    run_cursor,
    seq_cursor,
)
from lexicoord.web.viewer_shapes import episode_json, episode_row, event_detail, event_row, facets, run_json

PAGE = Path(__file__).parent / "static" / "viewer.html"
#: Episodes read to offer outcome and settings filters (a sample: the first ones in grid order).
FACET_SAMPLE = 500
#: Most lexicon events replayed for one board (beyond, the board says it is cut).
BOARD_MAX = 20_000


def is_local(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class RunViewer:
    """The viewer's calls on a read-only handle of the store; ``local_only``: answered to this machine alone."""

    def __init__(self, reader: Store, local_only: bool) -> None:
        self.reader = reader
        self.local_only = local_only

    def only_here(self, request: Request) -> None:
        if self.local_only and not is_local(request.client.host if request.client else None):
            raise HTTPException(403, "The run viewer shows every seat's private prompts: open it on the server's "
                                     "machine (or through an SSH tunnel).")

    def run_of(self, run: str) -> RunInfo:
        try:
            return self.reader.run(run)
        except LexicoordError as exc:
            raise HTTPException(404, str(exc)) from None

    def episode_of(self, run: str, episode: int) -> EpisodeRecord:
        record = self.reader.episode(episode)
        if record is None or record.run_id != self.run_of(run).id:
            raise HTTPException(404, f"No episode {episode} in run '{run}'.")
        return record

    def page(self) -> FileResponse:
        return FileResponse(PAGE)

    def runs(self, limit: str | None = None, after: str | None = None) -> dict[str, Any]:
        """Runs newest first; ``after`` is the cursor of the last run shown (the next page is older)."""
        reader = self.reader
        n = asked(page_size, limit, RUNS_PAGE, RUNS_MAX)
        rows = reader.run_page(n + 1, asked(run_cursor, after))
        page = rows[:n]
        rooms = reader.room_run_ids([r.id for r in page])
        return {"runs": [run_json(r, room=r.id in rooms) for r in page],
                "next": run_json(page[-1], room=False)["cursor"] if len(rows) > n else None}

    def run_head(self, run: str) -> dict[str, Any]:
        info = self.run_of(run)
        room = bool(self.reader.room_run_ids([info.id]))
        return {**run_json(info, room=room), "config": info.config,
                "facets": facets(self.reader.episode_shapes(info.id, FACET_SAMPLE)),
                "report": f"lexicoord report {info.id} --db {self.reader.url}"}

    def episodes(self, run: str, status: str | None = None, outcome: Annotated[list[str] | None, Query()] = None,
                 setting: Annotated[list[str] | None, Query()] = None, after: str | None = None,
                 before: str | None = None, limit: str | None = None) -> dict[str, Any]:
        reader = self.reader
        info = self.run_of(run)
        where = asked(EpisodeFilter.read, status, outcome or [], setting or [])
        n = asked(page_size, limit, EPISODES_PAGE, EPISODES_MAX)
        after_key, before_key = asked(episode_cursor, after, "after"), asked(episode_cursor, before, "before")
        filters = {"status": where.status, "outcome": where.outcome, "settings": where.settings}
        rows = reader.episode_page(info.id, limit=n + 1, after=after_key, before=before_key, **filters)
        more = len(rows) > n
        page = (rows[1:] if more else rows) if before_key is not None else rows[:n]
        shown = [episode_row(e) for e in page]

        def beyond(**edge: Any) -> bool:  # one more row past this page's edge? (one indexed row read)
            return bool(reader.episode_page(info.id, limit=1, **edge, **filters))

        older = more if before_key is not None else bool(page) and beyond(before=(page[0].position, page[0].id))
        newer = more if before_key is None else bool(page) and beyond(after=(page[-1].position, page[-1].id))
        return {"episodes": shown, "count": reader.count_episodes(info.id, **filters),
                "prev": shown[0]["cursor"] if shown and older else None,
                "next": shown[-1]["cursor"] if shown and newer else None}

    def episode_head(self, run: str, episode: int) -> dict[str, Any]:
        record = self.episode_of(run, episode)
        assert record.id is not None
        return episode_json(record, self.reader.event_span(record.id))

    def events(self, run: str, episode: int, after: str | None = None, before: str | None = None,
               limit: str | None = None) -> dict[str, Any]:
        reader = self.reader
        record = self.episode_of(run, episode)
        assert record.id is not None
        n = asked(page_size, limit, EVENTS_PAGE, EVENTS_MAX)
        after_seq, before_seq = asked(seq_cursor, after, "after"), asked(seq_cursor, before, "before")
        rows = reader.event_page(record.id, limit=n + 1, after=after_seq, before=before_seq)
        more = len(rows) > n
        page = (rows[1:] if more else rows) if before_seq is not None else rows[:n]
        older = more if before_seq is not None else bool(page) and bool(
            reader.event_page(record.id, limit=1, before=page[0].seq))
        newer = more if before_seq is None else bool(page) and bool(
            reader.event_page(record.id, limit=1, after=page[-1].seq))
        return {"events": [event_row(e) for e in page],
                "prev": page[0].seq if page and older else None, "next": page[-1].seq if page and newer else None}

    def one_event(self, run: str, episode: int, seq: int) -> dict[str, Any]:
        record = self.episode_of(run, episode)
        assert record.id is not None
        found = self.reader.event_page(record.id, limit=1, after=seq - 1)
        if not found or found[0].seq != seq:
            raise HTTPException(404, f"No event {seq} in episode {episode}.")
        return event_detail(found[0])

    def term_board(self, run: str, episode: int, upto: str | None = None) -> dict[str, Any]:
        record = self.episode_of(run, episode)
        assert record.id is not None
        last = asked(seq_cursor, upto, "upto")
        # The lexicon events up to the point asked, read through the episode's (type, seq) index: as cheap in an
        # episode of 100,000 events as in one of 100.
        lexicon = self.reader.event_page(record.id, limit=BOARD_MAX + 1, types=LEXICON_TYPES, upto=last)
        return {**board(lexicon[:BOARD_MAX]), "upto": last, "cut": len(lexicon) > BOARD_MAX}


def asked(fn: Any, *args: Any) -> Any:
    """``fn(*args)``, a query the viewer cannot read answered 400."""
    try:
        return fn(*args)
    except BadQuery as exc:
        raise HTTPException(400, str(exc)) from None


def viewer_routes(store: Store, *, local_only: bool = True) -> APIRouter:
    """The viewer's pages and JSON on a read-only handle of ``store``'s database."""
    load_event_types()  # once now, not on a reader's first page
    viewer = RunViewer(store.read_only(), local_only)
    router = APIRouter(dependencies=[Depends(viewer.only_here)])
    for path in ("/runs", "/runs/{run}", "/runs/{run}/episodes/{episode}"):
        router.add_api_route(path, viewer.page, methods=["GET"], include_in_schema=False)
    router.add_api_route("/api/runs", viewer.runs, methods=["GET"])
    router.add_api_route("/api/runs/{run}", viewer.run_head, methods=["GET"])
    router.add_api_route("/api/runs/{run}/episodes", viewer.episodes, methods=["GET"])
    router.add_api_route("/api/runs/{run}/episodes/{episode}", viewer.episode_head, methods=["GET"])
    router.add_api_route("/api/runs/{run}/episodes/{episode}/events", viewer.events, methods=["GET"])
    router.add_api_route("/api/runs/{run}/episodes/{episode}/events/{seq}", viewer.one_event, methods=["GET"])
    router.add_api_route("/api/runs/{run}/episodes/{episode}/board", viewer.term_board, methods=["GET"])
    return router
