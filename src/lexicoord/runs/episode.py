"""Plays one episode and turns it into a record: the single place an outcome or an error is written down.

The runner calls it for every episode of a campaign; a live room calls it for
every game played in the room. Both get the same record and the same events,
so a game played in a browser is stored exactly like one played in a campaign.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from typing import Any

from pydantic_core import to_jsonable_python

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import ErrorEvent, Event, OutcomeEvent
from lexicoord.core.protocol import Protocol
from lexicoord.errors import LexicoordError, blamed
from lexicoord.models.observe import ModelCallEvent, ModelCallRecord, observing
from lexicoord.runs.records import EpisodeRecord


def short_error(exc: BaseException) -> str:
    if isinstance(exc, LexicoordError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


async def play_episode(
    protocol: Protocol[Any, Any, Any], ctx: EpisodeContext[Any], run_id: str, position: int = 0
) -> tuple[EpisodeRecord, list[Event]]:
    """Play ``ctx``'s episode; a failure of the episode becomes a failed record, never an exception (a bad
    item, read as the protocol's item model as the episode starts, included).

    Cancellation propagates: an interrupted episode has no record and is played again on resume.
    """
    spec = ctx.spec
    started = time.time()
    outcome: dict[str, Any] | None = None
    error: str | None = None

    def record_call(call: ModelCallRecord) -> None:
        ctx.emit(ModelCallEvent.of(call))

    with observing(record_call):
        try:
            result = await protocol.play(protocol.start(ctx))
            if not isinstance(result, protocol.outcome_model):
                raise TypeError(f"protocol '{protocol.name}' returned {type(result).__name__}, "
                                f"not its outcome model {protocol.outcome_model.__name__}")
            outcome = to_jsonable_python(result.model_dump(mode="json"))
            ctx.emit(OutcomeEvent(outcome=outcome))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one failing episode never stops the run
            outcome = None
            seat = blamed(exc)
            error = f"seat {seat}: {short_error(exc)}" if seat else short_error(exc)
            ctx.emit(
                ErrorEvent(
                    agent=seat,
                    message=error,
                    error_type=type(exc).__name__,
                    raw=None if isinstance(exc, LexicoordError) else traceback.format_exc(limit=8),
                )
            )
    # An event that cannot be stored is caught by the writer, which then records the
    # episode as failed with the reason (checking here would serialise every event twice).
    events = ctx.recorder.events
    calls = [e for e in events if isinstance(e, ModelCallEvent)]
    record = EpisodeRecord(
        run_id=run_id,
        key=ctx.key,
        position=position,
        item_id=spec.item_id,
        repetition=spec.repetition,
        seed=ctx.seed,
        spec=spec.model_dump(mode="json"),
        status="done" if error is None else "failed",
        error=error,
        outcome=outcome if error is None else None,
        started_at=started,
        finished_at=time.time(),
        model_calls=len(calls),
        prompt_tokens=sum(c.usage.prompt_tokens or 0 for c in calls),
        completion_tokens=sum(c.usage.completion_tokens or 0 for c in calls),
    )
    return record, events
