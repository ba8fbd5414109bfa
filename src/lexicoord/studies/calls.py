"""The participant's JSON calls answered before the app's routing: the hot path of a study under a burst.

Every participant's page makes a handful of calls per stage (``enter``, ``answer``, ``me``'s long polls,
``play``), and hundreds of pages make them in the same second. Going through the framework's routing, each
call is matched against every route of the app (the rooms', the pages', the dashboard's) and has its
parameters solved, which cost the server more than the call's own work. This ASGI middleware answers
those calls by their exact method and path with the very same :class:`~lexicoord.studies.web.ParticipantApi`
methods the routes use, and hands everything else on: the routes stay registered, so a call this does not
take (another method, a query it does not read plainly) gets the framework's own answer, as before.

It sits inside the app's host check and security headers (added as a middleware, it runs after those), so
its answers carry the same headers and the same ``Server-Timing``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from lexicoord.studies.web import ParticipantApi

#: A ``ready`` the framework's integer parsing reads the same way (anything else goes to the routes).
_PLAIN_INT = re.compile(r"^-?[0-9]{1,9}$")


def where_query(raw: bytes) -> tuple[str | None, int | None] | None:
    """``me``'s ``stage`` and ``ready`` from a plain query string; None for any other query (the routes read it)."""
    if not raw:
        return None, None
    try:
        pairs = parse_qsl(raw.decode("latin-1"), keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None
    given = dict(pairs)
    if len(given) != len(pairs) or not set(given) <= {"stage", "ready"} or "" in given.values():
        return None
    ready = given.get("ready")
    if ready is not None and not _PLAIN_INT.match(ready):
        return None
    return given.get("stage"), int(ready) if ready is not None else None


class ParticipantCalls:
    """Answers ``POST enter/answer/play`` and ``GET me`` of one study's API at ``base`` through ``api``."""

    def __init__(self, app: ASGIApp, api: ParticipantApi, base: str) -> None:
        self.app = app
        self.api = api
        self.posts: dict[str, Callable[[Request], Awaitable[JSONResponse]]] = {
            f"{base}/enter": api.enter, f"{base}/answer": api.answer, f"{base}/play": api.play}
        self.me = f"{base}/me"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            method, path = scope["method"], scope["path"]
            if method == "POST" and path in self.posts:
                response = await self.posts[path](Request(scope, receive))
                await response(scope, receive, send)
                return
            if method == "GET" and path == self.me:
                query = where_query(scope.get("query_string", b""))
                if query is not None:
                    response = await self.api.where(Request(scope, receive), *query)
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)
