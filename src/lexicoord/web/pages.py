"""The rooms' pages: the start page, a room's page, and each protocol's page part.

Separate from the rooms' JSON API because these answer files only, the same to everyone: no room is looked
up and no client's budget is spent. A protocol's page part is served only from a registered adapter's
``scripts``, never from a path the request names.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response

from lexicoord.errors import LexicoordError
from lexicoord.web.errors import Refused
from lexicoord.web.services import Services

STATIC = Path(__file__).parent / "static"


class Pages:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def index(self) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def favicon(self) -> Response:
        return Response(status_code=204)

    async def room(self, code: str) -> FileResponse:
        return FileResponse(STATIC / "room.html")

    async def adapter_script(self, protocol: str) -> Response:
        """The page's part for a protocol this server offers (never a path: only a registered adapter's files, one
        after another, each ended so that the next starts a statement of its own)."""
        try:
            scripts = self.services.adapter(protocol).scripts
        except LexicoordError:
            scripts = ()
        if not scripts:
            raise Refused(404, "no_adapter", f"No page for '{protocol}' rooms on this server.")
        text = "\n;\n".join(path.read_text(encoding="utf-8") for path in scripts)
        return Response(text, media_type="text/javascript")


def page_routes(services: Services) -> APIRouter:
    """The pages' routes (and ``/static``, mounted by the app beside them)."""
    pages = Pages(services)
    router = APIRouter(include_in_schema=False)
    router.add_api_route("/", pages.index, methods=["GET"])
    router.add_api_route("/favicon.ico", pages.favicon, methods=["GET"])
    router.add_api_route("/r/{code}", pages.room, methods=["GET"])
    router.add_api_route("/adapters/{protocol}.js", pages.adapter_script, methods=["GET"])
    return router
