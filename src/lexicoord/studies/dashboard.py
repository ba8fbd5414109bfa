"""The experimenter's dashboard: ``/studies/<id>/admin``, its live state, its controls and its exports.

Every call needs the study's key (``X-Admin-Key``; printed when the server starts, or
``LEXICOORD_ADMIN_KEY``), and is answered only to this machine (loopback) unless the server was started to
listen publicly (``--host`` other than loopback). The page is static; it reads the key from its address's fragment (never sent to the server
in the URL, so it stays out of logs and referrers) and long-polls the state, which answers as soon as
anything in the study changes. Everything a participant wrote is put on the page as text, never as HTML.
"""

from __future__ import annotations

import hmac
import io
import ipaddress
import statistics
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from lexicoord.runs.store import Store
from lexicoord.studies.export import write_bonus, write_participants
from lexicoord.studies.participant import STAGES, StageError
from lexicoord.studies.study import Study
from lexicoord.studies.web import POLL, STATIC, refusal


def _loopback(host: str) -> bool:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def snapshot(study: Study) -> dict[str, Any]:
    """The study now, as the dashboard shows it."""
    now = study.clock()
    people = list(study.participants.values())
    by_stage = {s: sum(p.stage == s for p in people) for s in STAGES}
    times: dict[str, Any] = {}
    for s in STAGES[:-1]:
        spent = [t for p in people if (t := p.seconds_in(s)) is not None]
        times[s] = {"n": len(spent), "median": round(statistics.median(spent), 1) if spent else None,
                    "mean": round(statistics.fmean(spent), 1) if spent else None}
    groups = []
    for g in study.state.groups.values():
        room = study.rooms.get(g.room) if study.rooms and g.room else None
        seats = []
        for pid in g.members:
            p = study.participants[pid]
            person = room.people.get(p.seat or "") if room else None
            seats.append({"seat": p.seat, "kind": "person", "participant": pid, "stage": p.stage,
                          "outcome": p.outcome, "connected": bool(person and person.connections),
                          "taken_over": p.dropped is not None or bool(room and p.seat in room.game.taken)})
        # From the file, not the room: a finished group's room is closed, and its seats are still shown.
        seats += [{"seat": a.name, "kind": "agent", "model": a.model} for a in study.file.agents(g.condition)]
        seats += [{"seat": name, "kind": "stand-in", "model": study.file.stand_in(g.condition)} for name in g.filled]
        groups.append({"id": g.id, "room": g.room, "status": g.status, "error": g.error, "formed_at": g.formed_at,
                       "condition": g.condition, "seats": seats,
                       "games": study.file.group.games, "played": room.games if room else len(g.games),
                       "playing": bool(room and room.busy)})
    lobby = [{"participant": p.pid, "arrival": p.arrival, "waited": round(now - p.entered["lobby"], 1)}
             for p in study.waiting()]
    dropouts = [{"participant": p.pid, "group": p.group, "seat": p.seat, **p.dropped.model_dump()}
                for p in people if p.dropped is not None]
    recent = sorted(people, key=lambda p: max(p.entered.values(), default=0.0), reverse=True)[:200]
    return {
        "study": study.file.name, "title": study.file.title, "status": study.state.status,
        "lobby_open": study.state.lobby_open, "version": study.version, "participants": len(people),
        "by_stage": by_stage, "outcomes": study.outcome_counts(), "times": times, "lobby": lobby,
        "groups": groups, "dropouts": dropouts, "conditions": conditions(study),
        "recent": [{"participant": p.pid, "stage": p.stage, "outcome": p.outcome, "group": p.group,
                    "quiz_attempts": len(p.quiz), "attention": p.attention, "survey": p.survey} for p in recent],
    }


def conditions(study: Study) -> list[dict[str, Any]]:
    """Each condition's share so far: groups dealt it, their participants, games begun; open or closed."""
    out = []
    for c in study.file.conditions:
        groups = [g for g in study.state.groups.values() if g.condition == c.name]
        out.append({"name": c.name, "weight": c.weight, "open": c.name not in study.state.closed,
                    "groups": len(groups), "participants": sum(len(g.members) for g in groups),
                    "games": sum(len(g.games) for g in groups),
                    "finished": sum(g.status == "finished" for g in groups)})
    return out


class Dashboard:
    """The experimenter's calls on one study, each refused without the study's key (and from elsewhere than this
    machine, unless the server listens publicly)."""

    def __init__(self, study: Study, store: Store, key: str, public: bool) -> None:
        self.study, self.store, self.key, self.public = study, store, key, public

    def allowed(self, request: Request) -> None:
        host = request.client.host if request.client else ""
        if not self.public and not _loopback(host):
            raise StageError("not_here", "The dashboard answers only on the machine that serves the study; serve "
                                         "it with --host 0.0.0.0 to reach it elsewhere with its key.", 403)
        given = request.headers.get("x-admin-key", "")
        if not hmac.compare_digest(given.encode(), self.key.encode()):
            raise StageError("no_key", "The dashboard needs the study's key (printed when the server started).", 401)

    async def page(self) -> FileResponse:
        return FileResponse(STATIC / "admin.html")

    async def state(self, request: Request, since: int | None = None) -> JSONResponse:
        try:
            self.allowed(request)
        except StageError as exc:
            return refusal(exc)
        if since is not None and since >= self.study.version:
            await self.study.wait(None, POLL)
        return JSONResponse(snapshot(self.study))

    async def action(self, request: Request) -> JSONResponse:
        try:
            self.allowed(request)
            body = await request.json()
            if not isinstance(body, dict):
                raise StageError("bad_request", "The request is a JSON object.", 400)
            said = await self.study.control(str(body.get("action", ""))[:40], body.get("group"),
                                            body.get("participant"), body.get("condition"))
        except StageError as exc:
            return refusal(exc)
        except ValueError:
            return refusal(StageError("bad_request", "The request is not JSON.", 400))
        return JSONResponse({"message": said})

    async def participants(self, request: Request) -> Response:
        return self._csv(request, write_participants, "participants")

    async def bonus(self, request: Request) -> Response:
        return self._csv(request, write_bonus, "bonus")

    def _csv(self, request: Request, write: Any, what: str) -> Response:
        try:
            self.allowed(request)
        except StageError as exc:
            return refusal(exc)
        out = io.StringIO()
        write(self.study, self.store, out)
        return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{self.study.file.name}-{what}.csv"'})


def dashboard_routes(study: Study, store: Store, key: str, public: bool) -> APIRouter:
    """The dashboard's page and JSON for ``study``."""
    dashboard = Dashboard(study, store, key, public)
    name = study.file.name
    base = f"/api/studies/{name}/admin"
    router = APIRouter()
    router.add_api_route(f"/studies/{name}/admin", dashboard.page, methods=["GET"], include_in_schema=False)
    router.add_api_route(f"{base}/state", dashboard.state, methods=["GET"])
    router.add_api_route(f"{base}/action", dashboard.action, methods=["POST"])
    router.add_api_route(f"{base}/participants.csv", dashboard.participants, methods=["GET"])
    router.add_api_route(f"{base}/bonus.csv", dashboard.bonus, methods=["GET"])
    return router
