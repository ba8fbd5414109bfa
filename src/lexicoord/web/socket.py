"""The WebSocket each browser plays through: where it may come from, who it is, and what it may send.

Until a connection has said ``hello`` with a person's token it learns nothing
about the room its path names: a code that names no room is answered exactly
as one that does (the same replies to every message, the same refusal of the
token), and every refused ``hello`` costs the address one request of the limit
that room look-ups and joins have over HTTP, so codes and tokens are no quicker
to guess here (a hello with a seat's token costs nothing: many people behind one
address all reconnect at once after a restart).

Every refusal accepts the connection and then closes it with a code and a
one-sentence reason, so the page can say what happened (a refusal before the
handshake reaches a browser only as close code 1006, with no reason):

- ``4401`` the token belongs to no one in this room (or the room does not exist);
- ``4403`` the page is from another site;
- ``4410`` the room has closed (its games stay in the store);
- ``4429`` too many requests from this address;
- ``1009`` a message was too large; ``1008`` the connection kept flooding, or said no hello in time.

A connection must say hello within :data:`HELLO_TIMEOUT` seconds of opening (a page does at once);
otherwise it would hold its place (:mod:`lexicoord.web.guard`) for ever while learning nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.websockets import WebSocket, WebSocketDisconnect

from lexicoord.errors import LexicoordError
from lexicoord.web import messages as m
from lexicoord.web.connection import Connection
from lexicoord.web.errors import RoomError
from lexicoord.web.frames import ErrorFrame, Pong, Welcome, stats_of
from lexicoord.web.hosts import same_origin
from lexicoord.web.ratelimit import AddressLimiter, TokenBucket

if TYPE_CHECKING:
    from lexicoord.web.people import Person
    from lexicoord.web.room import Room

#: Messages per second a connection may send, and how many it may save up.
WS_RATE, WS_BURST = 10.0, 30.0
#: A connection that keeps flooding after this many refusals is closed.
WS_STRIKES = 50
#: Seconds a connection has to say a valid hello.
HELLO_TIMEOUT = 10.0

BAD_TOKEN = (4401, "This token belongs to no one in this room; join again.")
FOREIGN_ORIGIN = (4403, "This page is from another site; open the room from this server's own address.")
ROOM_CLOSED = (4410, "This room has closed; its games are kept.")
REPLACED = (4409, "This seat was opened in another page; this one has stopped.")
TOO_MANY = (4429, "Too many requests from this address; wait a little.")
TOO_LARGE = (1009, f"Messages are limited to {m.MAX_MESSAGE} characters.")
FLOODING = (1008, "Too many messages; the connection was closed.")
NO_HELLO = (1008, "No hello in time; the connection was closed.")


def error_text(code: str, message: str) -> str:
    """An ``error`` frame: a code for programs and a sentence for people."""
    return ErrorFrame(code=code, message=message).text()


def client_address(websocket: WebSocket) -> str:
    return websocket.client.host if websocket.client else "unknown"


async def play(websocket: WebSocket, find: Callable[[], Room | None], limiter: AddressLimiter) -> None:
    """One browser for as long as it stays; ``find`` is the room its path names, looked up at each hello."""
    await websocket.accept()
    if not same_origin(websocket.headers.get("origin"), websocket.headers.get("host")):
        code, reason = FOREIGN_ORIGIN  # another site's page must not play in our rooms
        await websocket.close(code=code, reason=reason)
        return
    await serve_connection(websocket, find, limiter)


async def serve_connection(websocket: WebSocket, find: Callable[[], Room | None], limiter: AddressLimiter) -> None:
    """Authenticate, then validate and act on each message; nothing of the room is said before a valid hello."""
    conn = Connection(websocket)
    bucket = TokenBucket(WS_RATE, WS_BURST)
    room: Room | None = None
    person: Person | None = None
    strikes = 0
    close: tuple[int, str] | None = None
    hello_by = asyncio.get_running_loop().time() + HELLO_TIMEOUT
    try:
        while True:
            if room is None:
                try:
                    frame = await asyncio.wait_for(websocket.receive(), hello_by - asyncio.get_running_loop().time())
                except TimeoutError:
                    close = NO_HELLO
                    break
            else:
                frame = await websocket.receive()
            if frame["type"] == "websocket.disconnect":
                break
            text = frame.get("text")
            if not bucket.take():
                strikes += 1
                conn.send(error_text("rate_limited", "Too many messages; this one was dropped."))
                if strikes > WS_STRIKES:
                    close = FLOODING
                    break
                continue
            if text is None:
                conn.send(error_text("bad_message", "Send JSON text, not binary frames."))
                continue
            try:
                # Before hello only every room's own messages parse: a room's game is not given away.
                msg = m.parse(text, room.adapter.messages if room is not None else ())
            except m.BadMessage as exc:
                conn.send(error_text(exc.code, str(exc)))
                if exc.code == "too_large":
                    close = TOO_LARGE
                    break
                continue
            if isinstance(msg, m.Hello):
                found_room = find()
                found = found_room.people.person_for(msg.token) if found_room is not None else None
                if found is None or found_room is None:
                    # Only a refused hello costs the address: a seat's token cannot be guessed, and a lab's
                    # people behind one router must all get back in after a restart, at once.
                    if not limiter.allow(client_address(websocket)):
                        conn.send(error_text("rate_limited", "Too many requests; wait a little."))
                        close = TOO_MANY
                        break
                    conn.send(error_text("bad_token", BAD_TOKEN[1]))
                    close = BAD_TOKEN
                    break
                if room is not None and person is not None and person is not found:
                    room.disconnect(person, conn)
                room, person = found_room, found
                room.connect(person, conn)
                conn.send(Welcome(name=person.name, leader=person is room.leader).text())
                if room.broadcast.stats is not None:
                    conn.send(stats_of(room.broadcast.stats).text())
                conn.send_state(room.broadcast.state_for(person))
                continue
            if room is None or person is None:
                conn.send(error_text("not_authenticated", "Say hello with your token first."))
                continue
            if isinstance(msg, m.Ping):
                conn.send(Pong().text())
                continue
            try:
                await room.handle(person, msg)
            except RoomError as exc:
                conn.send(error_text(exc.code, str(exc)))
            except LexicoordError as exc:
                conn.send(error_text("refused", str(exc)))
    except WebSocketDisconnect:
        pass
    finally:
        if room is not None and person is not None:
            room.disconnect(person, conn)
        if close is not None:
            await conn.close(*close)
        await conn.aclose()
