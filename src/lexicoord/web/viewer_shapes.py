"""Stored runs, episodes and events as the run viewer's JSON: small summaries for pages, everything on demand.

A page of a transcript carries each event's line, its audience and its small fields; long text is
cut (``clipped``) and a model call's prompt is left out, so a page stays a few kilobytes however
long the prompts grew. The whole event (prompt, raw reply, usage) is fetched when it is opened.
The JSON is data only: the page puts every string on screen as text.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from lexicoord.core.events import ChoiceEvent, ErrorEvent, Event, MessageEvent, OutcomeEvent
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import PLAYING

#: Characters of a string field shown on a page before it is cut (the whole is one click away).
CLIP = 600
#: Fields every event has, shown in their own columns rather than among its fields.
BASE_FIELDS = {"type", "version", "seq", "ts", "round", "phase", "agent", "audience"}
#: Outcome and settings values offered as filters: at most this many distinct values of a key.
FACET_VALUES = 20


def clip(value: Any, limit: int = CLIP) -> tuple[Any, bool]:
    """``value`` with every string longer than ``limit`` cut, and whether anything was cut."""
    if isinstance(value, str):
        return (value[:limit] + "…", True) if len(value) > limit else (value, False)
    if isinstance(value, list):
        out, cut = [], False
        for v in value[:50]:
            c, was = clip(v, limit)
            out.append(c)
            cut |= was
        return out, cut or len(value) > 50
    if isinstance(value, dict):
        pairs, cut = {}, False
        for k, v in value.items():
            pairs[k], was = clip(v, limit)
            cut |= was
        return pairs, cut
    return value, False


def scalars(data: dict[str, Any] | None) -> dict[str, Any]:
    """The flat values of an outcome or settings (what a table column and a filter can show)."""
    return {k: v for k, v in (data or {}).items() if v is None or isinstance(v, str | int | float | bool)}


def run_json(run: RunInfo, *, room: bool) -> dict[str, Any]:
    return {"id": run.id, "protocol": run.protocol, "status": run.status, "kind": "room" if room else "campaign",
            "created_at": run.created_at, "updated_at": run.updated_at, "episodes": run.total_episodes,
            "done": run.done, "failed": run.failed, "cursor": f"{run.created_at!r}:{run.id}"}


def lineup(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": s.get("name"), "kind": s.get("kind"), "model": s.get("model"), "role": s.get("role")}
            for s in spec.get("lineup") or [] if isinstance(s, dict)]


def episode_row(e: EpisodeRecord) -> dict[str, Any]:
    """One line of a run's episode list (the item itself is left for the episode's own page)."""
    error, _ = clip(e.error, 300)
    return {"id": e.id, "position": e.position, "item_id": e.item_id, "repetition": e.repetition,
            "status": e.status, "error": error, "outcome": scalars(e.outcome),
            "settings": scalars(e.spec.get("settings")), "lineup": lineup(e.spec), "model_calls": e.model_calls,
            "prompt_tokens": e.prompt_tokens, "completion_tokens": e.completion_tokens,
            "started_at": e.started_at, "finished_at": e.finished_at, "attempt": e.attempt,
            "cursor": f"{e.position}:{e.id}"}


def episode_json(e: EpisodeRecord, span: tuple[int, int, int]) -> dict[str, Any]:
    """An episode's head: the row, plus its whole item, outcome and settings, and how many events it has.

    A live room's game still being played is stored without its item and seed (see ``Store.keep_live``);
    its key, a hash of the whole spec, is left out too until the game has ended."""
    item, _ = clip(e.spec.get("item") or {}, 4000)
    playing = e.status == PLAYING
    return {**episode_row(e), "error": e.error, "outcome_full": e.outcome, "settings_full": e.spec.get("settings") or {},
            "item": item, "seed": None if playing else e.seed, "key": None if playing else e.key,
            "events": {"count": span[0], "first": span[1], "last": span[2]}}


def facets(shapes: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, dict[str, list[Any]]]:
    """The outcome and settings keys worth filtering on, with their values, from a sample of episodes."""
    out: dict[str, dict[str, list[Any]]] = {"outcome": {}, "settings": {}}
    for part, index in (("outcome", 0), ("settings", 1)):
        seen: dict[str, Counter[str]] = {}
        for shape in shapes:
            for k, v in scalars(shape[index]).items():
                seen.setdefault(k, Counter())[json.dumps(v)] += 1
        for k, values in sorted(seen.items()):
            if len(values) <= FACET_VALUES and not (part == "outcome" and len(values) == len(shapes) > 3):
                out[part][k] = sorted((json.loads(v) for v in values), key=lambda v: (str(type(v)), str(v)))
    return out


def line(e: Event) -> str | None:
    """The event in one sentence: its own ``line()``, or one for the core events and model calls."""
    said = e.line()
    if said is not None:
        return said
    if isinstance(e, MessageEvent):
        return f"says: {e.content}"
    if isinstance(e, ChoiceEvent):
        return f"no valid choice ({e.failure or 'no reason'})" if e.choice is None else f"chose {e.choice}: {e.justification}"
    if isinstance(e, OutcomeEvent):
        return f"outcome {json.dumps(e.outcome, ensure_ascii=False)}"
    if isinstance(e, ErrorEvent):
        return f"error: {e.message}"
    if e.type == "model_call":
        data = e.model_dump()
        failed = f" failed: {data.get('error')}" if data.get("error") else ""
        return f"model {data.get('model')}{failed}"
    return None


def event_row(e: Event) -> dict[str, Any]:
    """An event on a transcript page: who, when, to whom, one line, small fields; a model call's cost."""
    data = e.model_dump(mode="json")
    said = line(e)
    said_cut, cut = clip(said) if said is not None else (None, False)
    fields, cut_fields = clip({k: v for k, v in data.items() if k not in BASE_FIELDS and k not in ("messages", "config")})
    row: dict[str, Any] = {
        "seq": e.seq, "type": e.type, "agent": e.agent, "round": e.round, "phase": e.phase, "ts": e.ts,
        "audience": {"kind": e.audience.kind, "text": e.audience.describe()},
        "line": said_cut, "fields": fields, "clipped": cut or cut_fields, "call": None,
    }
    if e.type == "model_call":
        usage = data.get("usage") or {}
        reply, _ = clip(data.get("text") or "", 200)
        row["call"] = {"model": data.get("model"), "prompt_tokens": usage.get("prompt_tokens"),
                       "completion_tokens": usage.get("completion_tokens"), "latency": data.get("latency"),
                       "cached": data.get("cached"), "attempts": data.get("attempts"), "error": data.get("error"),
                       "parse_error": data.get("parse_error"), "messages": len(data.get("messages") or []),
                       "reply": reply}
        row["fields"] = {}
    return row


def event_detail(e: Event) -> dict[str, Any]:
    """The whole event as stored (a model call's prompt, raw reply, parsed value and usage included)."""
    return {**event_row(e), "data": e.model_dump(mode="json")}
