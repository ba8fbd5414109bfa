"""The participant's side of a study over HTTP: the page, its texts, and a small JSON API.

``GET /studies/<id>/`` is the page a recruitment link opens (``?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..``,
or ``?pid=..``). The page then speaks JSON:

- ``POST /api/studies/<id>/enter`` ``{pid, study_id, session_id}``: a new session and its secret token, or the
  participant's own again (the token their browser kept, as ``Authorization: Bearer``);
- ``GET /api/studies/<id>/pages``: the study's texts (the quiz without its answers, the survey without its
  attention checks' expected answers);
- ``GET /api/studies/<id>/me?stage=S``: where the participant is; with ``stage``, waits (up to 25 s) until
  they are somewhere else, so a page in the lobby hears of its group at once (``&ready=0``: or until the
  game the page waits for is ready, which answers at once if it already is);
- ``POST /api/studies/<id>/answer`` ``{stage, ...}``: the answer to the participant's stage;
- ``POST /api/studies/<id>/play``: the room and a fresh seat token for the participant's game.

Every call but ``enter`` and ``pages`` names the participant (``X-Participant``) and carries their token:
a participant reaches only their own session.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse
from markdown_it import MarkdownIt

from lexicoord.studies.file import StudyFile, pages_of
from lexicoord.studies.participant import Participant, StageError, clean_pid
from lexicoord.studies.study import Study
from lexicoord.web.ratelimit import AddressLimiter

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"
#: Bytes a participant's request body may have (a survey's free text is limited per question besides).
MAX_BODY = 256 * 1024
#: Seconds a page's long poll waits for a change.
POLL = 25.0
#: What the completion page says for each outcome.
MESSAGES = {
    "completed": "Thank you: you have completed the study.",
    "no_consent": "You chose not to take part. Thank you for your time.",
    "failed_quiz": "The comprehension check was not passed, so the study ends here. Thank you for your time.",
    "no_group": "No group could be formed for you in time. Thank you for waiting.",
    "dropped": "You were away from the game too long, so a computer player took your seat.",
}


@lru_cache(maxsize=8)
def _html(markdown: str) -> str:
    """A researcher's Markdown as HTML with raw HTML escaped (never passed through) and unsafe links dropped."""
    return str(MarkdownIt("commonmark", {"html": False, "linkify": False}).render(markdown))


def refusal(exc: StageError) -> JSONResponse:
    return JSONResponse({"code": exc.code, "message": str(exc)}, status_code=exc.status)


def view(study: Study, p: Participant) -> dict[str, Any]:
    """What the participant's page shows now: only their own session."""
    out: dict[str, Any] = {"stage": p.stage, "pid": p.pid, "status": study.state.status}
    file = study.file
    if p.stage == "quiz":
        last = p.quiz[-1] if p.quiz else None
        out.update(attempts_left=file.quiz.attempts - len(p.quiz), wrong=last.wrong if last else [])
    elif p.stage == "lobby":
        waiting = study.waiting()
        out.update(place=next((i for i, w in enumerate(waiting, 1) if w is p), None), waiting=len(waiting),
                   needed=file.group.people, waited=round(study.clock() - p.entered["lobby"], 1),
                   timeout=file.lobby.timeout)
    elif p.stage == "game":
        group = study.state.groups.get(p.group or "")
        room = study.rooms.get(group.room) if study.rooms and group and group.room else None
        condition = file.condition(group.condition if group else None)
        out.update(ready=room is not None, seat=p.seat, games=file.group.games,
                   game=room.games if room else 0,
                   brief=_html(condition.brief.markdown()) if condition is not None and condition.brief else None)
    elif p.stage == "done" and p.outcome is not None:
        redirect = file.completion.redirect
        out.update(outcome=p.outcome, code=p.code, message=MESSAGES[p.outcome],
                   redirect=redirect.replace("{code}", quote(p.code or "")) if redirect else None)
    return out


async def body_of(request: Request) -> dict[str, Any]:
    """The request's JSON object, at most :data:`MAX_BODY` bytes."""
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > MAX_BODY:
        raise StageError("too_large", f"A request may have at most {MAX_BODY // 1024} KB.", 413)
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise StageError("too_large", f"A request may have at most {MAX_BODY // 1024} KB.", 413)
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise StageError("bad_request", "The request is not JSON.", 400) from None
    if not isinstance(body, dict):
        raise StageError("bad_request", "The request is a JSON object.", 400)
    return body


def token(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


class ParticipantApi:
    """The participant's calls on one study; ``limiter`` holds each address to its rate of new sessions."""

    def __init__(self, study: Study, limiter: AddressLimiter) -> None:
        self.study = study
        self.limiter = limiter
        self.warned = False

    def client(self, request: Request) -> str:
        host = request.client.host if request.client else "unknown"
        forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",") if a.strip()]
        if not self.warned and forwarded and host not in forwarded:  # a trusted proxy's would have named the client
            # A proxy this server does not trust (no --forwarded-allow-ips): every participant looks like the
            # proxy, one address sharing one budget of new sessions.
            self.warned = True
            log.warning("requests come through a proxy (X-Forwarded-For from %s) that is not trusted: every "
                        "participant counts as that one address; serve with --forwarded-allow-ips %s", host, host)
        return host

    def me(self, request: Request) -> Participant:
        given = token(request)
        if given is None:
            raise StageError("unknown", "This page's session is unknown here; open the study from your link.", 401)
        return self.study.participant(clean_pid(request.headers.get("x-participant")), given)

    async def page(self) -> FileResponse:
        return FileResponse(STATIC / "study.html")

    async def pages(self) -> dict[str, Any]:
        texts = pages_of(self.study.file)
        return {**texts.model_dump(), "consent": _html(texts.consent), "instructions": _html(texts.instructions)}

    async def enter(self, request: Request) -> JSONResponse:
        study = self.study
        try:
            if not self.limiter.allow(self.client(request)):
                raise StageError("rate_limited", "Too many requests; wait a little.", 429)
            body = await body_of(request)
            pid = clean_pid(body.get("pid"))
            ref = clean_pid(body["study_id"], "STUDY_ID") if body.get("study_id") else None
            session = clean_pid(body["session_id"], "SESSION_ID") if body.get("session_id") else None
            p, new = await study.enter(pid, token(request), ref, session)
        except StageError as exc:
            return refusal(exc)
        return JSONResponse({"token": new, "view": view(study, p)}, status_code=201 if new else 200)

    async def where(self, request: Request, stage: str | None = None, ready: int | None = None) -> JSONResponse:
        study = self.study
        try:
            p = self.me(request)
            seen = stage is not None and stage == p.stage and stage in ("lobby", "game")
            if seen and not (stage == "game" and ready == 0 and view(study, p)["ready"]):
                await study.wait(p.pid, POLL)
                study.heard(p)
        except StageError as exc:
            return refusal(exc)
        return JSONResponse(view(study, p))

    async def answer(self, request: Request) -> JSONResponse:
        try:
            p = self.me(request)
            body = await body_of(request)
            told = await self.study.submit(p, str(body.get("stage", ""))[:20], body)
        except StageError as exc:
            return refusal(exc)
        return JSONResponse({**told, "view": view(self.study, p)})

    async def play(self, request: Request) -> JSONResponse:
        try:
            code, seat_token = await self.study.seat_token(self.me(request))
        except StageError as exc:
            return refusal(exc)
        return JSONResponse({"room": code, "token": seat_token, "path": f"/r/{code}"})


def api_base(study: Study) -> str:
    """Where the study's JSON calls are."""
    return f"/api/studies/{study.file.name}"


def participant_routes(api: ParticipantApi) -> APIRouter:
    """The participant's page and JSON for ``api``'s study (its static files are mounted at ``/study-static``;
    :mod:`lexicoord.studies.calls` answers the JSON calls before the routing when it is added)."""
    name = api.study.file.name
    base = api_base(api.study)
    router = APIRouter()
    router.add_api_route(f"/studies/{name}/", api.page, methods=["GET"], include_in_schema=False)
    router.add_api_route(f"{base}/pages", api.pages, methods=["GET"])
    router.add_api_route(f"{base}/enter", api.enter, methods=["POST"])
    router.add_api_route(f"{base}/me", api.where, methods=["GET"])
    router.add_api_route(f"{base}/answer", api.answer, methods=["POST"])
    router.add_api_route(f"{base}/play", api.play, methods=["POST"])
    return router


def study_link(base: str, file: StudyFile) -> str:
    """The recruitment link, with Prolific's placeholders (Prolific fills them for each participant)."""
    return f"{base}/studies/{file.name}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}" \
           f"&SESSION_ID={{{{%SESSION_ID%}}}}"
