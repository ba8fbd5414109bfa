"""``Gate``: a pipeline hands over an instruction and acts only on ``clear``.

A check is an episode of the gate's run (one run per configuration), played as a task on the caller's event
loop: ``check`` returns as soon as the verdict is known or a person must answer (``ask``), or after ``wait``
seconds with ``pending``. The verdict as it stands is kept in the store's ``gates`` table, so any process
sharing the store can read it, and every seat's answers are journaled, so a check cut short by a restart goes
on from its journal without calling a model twice (``get`` or ``answer`` resumes it).

Idempotency: a ``key`` names a check within the run. The same key with the same request returns that check
(settled or not) and never starts a second; with another request it is refused. An answer repeated to the same
question returns the verdict it led to instead of counting twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import threading
import time
from collections.abc import AsyncIterator, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event
from lexicoord.core.seat import Request
from lexicoord.core.spec import EpisodeSpec
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.gate import records
from lexicoord.gate.deliberation import MAX_ANSWER, MAX_OPTION, MAX_OPTIONS, PERSON
from lexicoord.gate.policies import lineup
from lexicoord.gate.protocol import GateCheck
from lexicoord.gate.records import FINAL, GateState
from lexicoord.gate.settings import GateSettings
from lexicoord.gate.verdict import Clarification, Decision, Verdict
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.pool import ModelPool
from lexicoord.runs.episode import play_episode
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.shared_transactions import SharedTransactions
from lexicoord.runs.store import Store
from lexicoord.runs.store_journal import Move, clear_moves, journal_moves
from lexicoord.seats.factory import SeatFactory
from lexicoord.seats.human import HumanSeat
from lexicoord.seats.journal import JournaledSeats

T = TypeVar("T")
MAX_INSTRUCTION = 4000
MAX_CONTEXT = 20000
#: Seconds ``get`` waits for a resumed check to reach where it stood (its journal replays without a model).
RESUME_WAIT = 5.0
#: Seconds a process's claim on a check it plays holds without being renewed (renewed every third of it).
LEASE = 30.0
log = logging.getLogger(__name__)


class GateError(LexicoordError):
    """A gate request that cannot be served; ``status`` is the HTTP status it maps to."""

    status = 400


class GateInputError(GateError):
    status = 422


class UnknownGate(GateError):
    status = 404


class GateConflict(GateError):
    """A key reused for another request, or an answer to a gate that asks nothing (any more)."""

    status = 409


def _text(value: str, what: str) -> str:
    bad = [c for c in value if (ord(c) < 32 and c not in "\n\t\r") or c == "\ufffd"]
    if bad:
        raise ValueError(f"the {what} holds control or undecodable characters (binary data is not an instruction)")
    return value.strip()


class CheckRequest(BaseModel):
    """What a caller asks, checked at the boundary (the same limits in Python, HTTP and MCP)."""

    instruction: str = Field(min_length=1, max_length=MAX_INSTRUCTION)
    context: str = Field(default="", max_length=MAX_CONTEXT)
    candidates: list[str] | None = Field(default=None, min_length=2, max_length=MAX_OPTIONS)
    key: str | None = Field(default=None, min_length=1, max_length=200)
    timeout: float | None = Field(default=None, gt=0, le=3600)

    @field_validator("instruction")
    @classmethod
    def _instruction(cls, v: str) -> str:
        v = _text(v, "instruction")
        if not v:
            raise ValueError("the instruction is empty")
        return v

    @field_validator("context")
    @classmethod
    def _context(cls, v: str) -> str:
        return _text(v, "context")

    @field_validator("candidates")
    @classmethod
    def _candidates(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        cleaned = [_text(c, "candidate") for c in v]
        if any(not c or len(c) > MAX_OPTION for c in cleaned):
            raise ValueError(f"every candidate must hold 1 to {MAX_OPTION} characters")
        if len(set(cleaned)) != len(cleaned):
            raise ValueError("the candidates must differ")
        return cleaned

    def fingerprint(self) -> str:
        """What makes two requests the same check (the key and the caller's wait aside)."""
        blob = json.dumps(self.model_dump(exclude={"key", "timeout"}), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()


def _checked(model: type[BaseModel], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'request'}: {e['msg']}" for e in exc.errors())
        raise GateInputError(problems.replace("Value error, ", "")) from None


class AnswerRequest(BaseModel):
    choice: str | None = Field(default=None, min_length=1, max_length=MAX_OPTION)
    text: str | None = Field(default=None, min_length=1, max_length=MAX_ANSWER)
    refuse: bool = False
    #: The verdict's ``asked``: the answer is for that question only (a retry never answers a later one).
    question: int | None = Field(default=None, ge=1)

    @field_validator("text")
    @classmethod
    def _clean(cls, v: str | None) -> str | None:
        return _text(v, "answer") or None if v is not None else None

    def value(self) -> dict[str, Any]:
        return {k: v for k, v in (("choice", self.choice), ("text", self.text)) if v}


@dataclass
class _Ended:
    """A check played to its end: its episode and the verdict its row takes, written together."""

    gate_id: str
    record: EpisodeRecord
    events: list[Event]
    status: str
    verdict: dict[str, Any]


@dataclass
class _Live:
    """A check being played in this process."""

    ctx: EpisodeContext
    person: HumanSeat
    task: asyncio.Task[None] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    answers: list[dict[str, Any]] = field(default_factory=list)
    #: When the question being asked stops waiting for the person.
    expires_at: float | None = None
    #: The last write of the check's row, so that each waits for the one before (a late write never wins).
    write: asyncio.Task[Any] | None = None


class Gate:
    """Checks instructions under one configuration (:class:`GateSettings`), recorded in one run of ``store``.

    ``Gate(policy="debate", models=["openai/gpt-4o-mini"])``; ``models`` default to the embedded model. ``pool``
    lets a caller (or a test) supply its own models; ``store`` or ``db`` where records go (default store).
    """

    def __init__(self, policy: str = "adaptive", models: list[str] | None = None, *,
                 settings: GateSettings | None = None, store: Store | None = None, db: str | None = None,
                 pool: ModelPool | None = None, run: str | None = None, **options: Any) -> None:
        if settings is None:
            data: dict[str, Any] = {"policy": policy, **options}
            if models:
                data["models"] = list(models)
            try:
                settings = GateSettings.model_validate(data)
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                raise ConfigError(f"Gate settings: {problems}.") from None
        self.settings = settings.check()
        self.store = store if store is not None else Store(db)
        self._own_pool = pool is None
        self.pool = pool if pool is not None else ModelPool(cache=False)
        self.run_id = run or self.settings.run_id
        self._opened = False
        self._live: dict[str, _Live] = {}
        self._keys: dict[str, asyncio.Lock] = {}
        self._answering: dict[str, asyncio.Lock] = {}
        #: This process, as the owner of the checks it plays (a claim on the row, renewed while it plays).
        self.owner = secrets.token_hex(8)
        #: The checks' writes (rows, journals, episodes), shared among the checks of the moment: a hundred callers
        #: at once wait for a few transactions, not four hundred one after another.
        self._writes = SharedTransactions(self.store, "lexicoord-gate")
        self._heartbeat: asyncio.Task[None] | None = None

    # the caller's three calls ---------------------------------------------------------------------
    async def check(self, instruction: str, *, context: str = "", candidates: list[str] | None = None,
                    key: str | None = None, timeout: float | None = None, wait: float | None = None) -> Verdict:
        """Check ``instruction``; returns once the verdict is ``clear``/``refuse``/``error``, or ``ask`` (a person
        must answer), or after ``wait`` seconds with ``pending`` (``None``: no such limit).

        ``timeout`` bounds the models' deciding (not a person's answering); past it the verdict is ``error``."""
        request: CheckRequest = _checked(CheckRequest, {"instruction": instruction, "context": context,
                                                        "candidates": candidates, "key": key, "timeout": timeout})
        await self._open()
        if request.key is None:
            state = await self._create(request)
        else:
            async with self._keys.setdefault(request.key, asyncio.Lock()):
                found = await asyncio.to_thread(records.by_key, self.store, self.run_id, request.key)
                if found is None:
                    state = await self._create(request)
                else:
                    state = found
                if state.request.get("fingerprint") != request.fingerprint():
                    raise GateConflict(f"The key '{request.key}' was used for another request (gate {state.id}); "
                                       "use a new key for a new instruction.")
        return await self._settled(state.id, wait)

    async def answer(self, gate_id: str, *, choice: str | None = None, text: str | None = None,
                     refuse: bool = False, question: int | None = None, wait: float | None = None) -> Verdict:
        """The person's answer to the question of an ``ask`` verdict: an option, a free text, or both; or
        ``refuse`` (the person declines; the gate refuses).

        ``question`` is the verdict's ``asked`` (the question's number): given, the answer counts for that question
        only, and sent again it returns the verdict it led to, whatever was asked since (a caller that retries or
        resumes should always send it). Without it, the answer is for the question being asked now."""
        said: AnswerRequest = _checked(AnswerRequest, {"choice": choice, "text": text, "refuse": refuse})
        if not said.refuse and not said.value():
            raise GateInputError("An answer needs a choice, a text, or refuse.")
        entry = {"choice": said.choice, "text": said.text, "refuse": said.refuse}
        async with self._answering.setdefault(gate_id, asyncio.Lock()):  # one answer at a time per check
            state = await self._state(gate_id)
            live = self._live.get(gate_id)
            answered = live.answers if live is not None else list(state.verdict.get("answers", []))
            if question is not None:
                before = [a for a in answered if a.get("question") == question]
                if before:
                    if {k: before[-1].get(k) for k in entry} == entry:
                        return await self._settled(gate_id, wait)  # a retry of an answer already counted
                    raise GateConflict(f"Question {question} of gate {gate_id} was already answered otherwise.")
            elif state.status != "ask" and answered and {k: answered[-1].get(k) for k in entry} == entry:
                return await self._settled(gate_id, wait)  # a retry of the answer already counted
            if state.status in FINAL:
                raise GateConflict(f"Gate {gate_id} is {state.status} and asks nothing: "
                                   + (state.verdict.get("reason") or "its verdict is given") + ".")
            if state.expires_at is not None and state.status == "ask" and state.expires_at < time.time():
                await self._settled(gate_id, wait)  # the resumed check refuses at once
                raise GateConflict(f"Gate {gate_id}'s question expired; the gate refuses.")
            live = await self._asking(gate_id)
            pending = live.person.pending
            assert pending is not None
            number = pending.view.get("asked")
            if question is not None and question != number:
                raise GateConflict(f"Gate {gate_id} is asking question {number}, not {question}.")
            if not said.refuse:
                problem = pending.check(said.value())
                if problem is not None:
                    raise GateInputError(f"The answer does not fit the question: {problem}.")
            taken = live.person.submit(action="refuse") if said.refuse else live.person.submit(said.value())
            if not taken:
                raise GateConflict(f"Gate {gate_id}'s question was answered meanwhile.")
            live.answers.append({**entry, "question": number})
        return await self._settled(gate_id, wait, answered=pending)

    async def get(self, gate_id: str) -> Verdict:
        """The verdict as it stands (a check left unsettled by a restart is resumed)."""
        state = await self._state(gate_id)
        if state.status not in FINAL and gate_id not in self._live:
            if await self._resume(state) is None:  # another process plays it, or it ended: as stored
                return self._verdict(await self._state(gate_id))
            return await self._settled(gate_id, RESUME_WAIT)  # replaying the journal takes a moment
        live = self._live.get(gate_id)
        return await self._live_verdict(gate_id, live) if live is not None else self._verdict(state)

    async def watch(self, gate_id: str) -> AsyncIterator[Verdict]:
        """Every verdict the check goes through, from now until it is final."""
        verdict = await self.get(gate_id)
        yield verdict
        while verdict.status not in FINAL:
            live = self._live.get(gate_id)
            if live is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(live.changed.wait(), 15.0)
            else:
                await asyncio.sleep(0.5)
            now = await self.get(gate_id)
            if now.model_dump(exclude={"updated_at", "latency_s"}) != verdict.model_dump(exclude={"updated_at", "latency_s"}):
                verdict = now
                yield verdict

    async def resume_unsettled(self) -> int:
        """Go on with this run's checks left deciding or asking by a process that stopped (a server calls it as it
        starts, so a check nobody reads again still ends, and is counted); returns how many this process took."""
        taken = 0
        for state in await asyncio.to_thread(records.unsettled, self.store, self.run_id):
            if state.id not in self._live and await self._resume(state) is not None:
                taken += 1
        return taken

    def token_ok(self, gate_id: str, token: str) -> bool:
        """Whether ``token`` is the one of ``gate_id``'s page (constant time)."""
        state = records.get(self.store, gate_id)
        return state is not None and secrets.compare_digest(state.token, token or "")

    async def aclose(self) -> None:
        """Stop the checks in play (their journals stay: a later ``get`` resumes them) and the models."""
        tasks = [live.task for live in self._live.values() if live.task is not None]
        for live in self._live.values():  # the stored state stays as it was (asking), for the next process
            live.person.listener = None
        for task in tasks:
            task.cancel()
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            tasks.append(self._heartbeat)
        await asyncio.gather(*tasks, return_exceptions=True)
        # The checks' last states, already on their way to the row, land before the writer closes.
        for live in self._live.values():
            await _landed(live.write)
        ids = list(self._live)
        self._live.clear()
        with contextlib.suppress(Exception):  # another process may go on with them at once
            await self._writes.write(lambda s: records.release(s, ids, self.owner))
        await self._writes.aclose()
        if self._own_pool:
            await self.pool.aclose()

    async def __aenter__(self) -> Gate:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # the check's life --------------------------------------------------------------------------------
    async def _open(self) -> None:
        if not self._opened:
            await asyncio.to_thread(self.store.open_run, self.run_id, "gate", self.settings.model_dump(mode="json"), 0)
            self._opened = True

    async def _state(self, gate_id: str) -> GateState:
        state = await asyncio.to_thread(records.get, self.store, gate_id) if isinstance(gate_id, str) else None
        if state is None or state.run_id != self.run_id:
            raise UnknownGate(f"No gate '{str(gate_id)[:80]}' in run {self.run_id}.")
        return state

    async def _create(self, request: CheckRequest) -> GateState:
        gate_id = secrets.token_hex(8)
        spec = EpisodeSpec(item_id=gate_id, settings=self.settings.model_dump(mode="json"),
                           item={"instruction": request.instruction, "context": request.context,
                                 "candidates": request.candidates, "timeout": request.timeout},
                           lineup=lineup(self.settings))
        now = time.time()
        state = GateState(id=gate_id, run_id=self.run_id, key=request.key, episode_key=spec.key, status="pending",
                          token=secrets.token_urlsafe(18), created_at=now, updated_at=now, expires_at=None,
                          owner=self.owner, lease_until=now + LEASE,
                          request={"spec": spec.model_dump(mode="json"), "fingerprint": request.fingerprint()},
                          verdict={})
        try:
            await self._writes.write(lambda s: records.create(s, state))
        except IntegrityError:  # another process took the key first: its check is this one
            assert request.key is not None
            found = await asyncio.to_thread(records.by_key, self.store, self.run_id, request.key)
            assert found is not None
            return found
        self._start(state, spec, {})
        return state

    def _start(self, state: GateState, spec: EpisodeSpec, replay: dict[str, list[dict[str, Any]]]) -> _Live:
        person_timeout = self.settings.person_timeout
        if state.expires_at is not None:  # resumed while asking: what is left of the person's time
            person_timeout = max(0.01, state.expires_at - time.time())
        person = HumanSeat(PERSON, timeout=person_timeout, role="person")
        factory = SeatFactory(self.pool, people={PERSON: person}, own_kinds=GateCheck.seat_kinds)

        async def journal(player: str, idx: int, entry: dict[str, Any]) -> None:
            move = Move(self.run_id, spec.key, player, idx, entry)
            await self._writes.write(lambda s: journal_moves(s, [move]))

        ctx = EpisodeContext(spec=spec, seed=spec.seed(), make_seat=JournaledSeats(factory, replay, journal))
        live = _Live(ctx=ctx, person=person, answers=list(state.verdict.get("answers", [])))
        person.listener = lambda: self._changed(state.id)
        self._live[state.id] = live
        live.task = asyncio.create_task(self._play(state, live), name=f"gate {state.id}")
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._hold(), name="gate claims")
        return live

    async def _hold(self) -> None:
        """Renew the claims on the checks this process plays, while it plays any."""
        while self._live:
            await asyncio.sleep(LEASE / 3)
            ids = list(self._live)
            with contextlib.suppress(Exception):  # a busy store: the next beat tries again, well within the lease
                await self._writes.write(partial(records.renew, gate_ids=ids, owner=self.owner, lease=LEASE))

    async def _resume(self, state: GateState) -> _Live | None:
        """Go on with a check this process does not play: ``None`` when its episode was saved already (its row is
        then settled from it) or another process holds it."""
        spec = EpisodeSpec.model_validate(state.request["spec"])
        saved = await asyncio.to_thread(self.store.episodes, self.run_id, [spec.key])
        if saved:
            record = saved[0]
            decision = _decision(record, self.settings.policy)
            verdict = _final(decision, record, list(state.verdict.get("answers", [])), state.created_at)
            await self._writes.write(lambda s: records.update(s, state.id, decision.status, verdict, None))
            return None
        if not await self._writes.write(lambda s: records.claim(s, state.id, self.owner, LEASE)):
            return None
        replay = await asyncio.to_thread(self.store.episode_moves, self.run_id, spec.key)
        return self._start(state, spec, replay)

    async def _play(self, state: GateState, live: _Live) -> None:
        record, events = await play_episode(GateCheck(), live.ctx, self.run_id)
        try:
            await _landed(live.write)  # in order: the question's state lands before the verdict
            try:
                decision = _decision(record, self.settings.policy)
            except Exception as exc:  # an outcome the policy cannot read is no verdict, and is stored as such
                decision = Decision(status="error", policy=self.settings.policy,
                                    reason=f"the check's outcome could not be read: {exc}")
            verdict = _final(decision, record, list(live.answers), state.created_at)
            try:
                await self._writes.together(self._settle, _Ended(state.id, record, events, decision.status, verdict))
            except Exception as exc:  # a verdict whose record cannot be kept is no verdict
                failed = Decision(status="error", policy=self.settings.policy,
                                  reason=f"the check's record could not be stored: {exc}")
                error = _final(failed, record, list(live.answers), state.created_at)
                try:
                    await self._writes.write(lambda s: records.update(s, state.id, "error", error, None))
                except Exception as again:  # the row keeps its last state; a later read resumes the check
                    log.warning("gate %s: its verdict could not be written: %s", state.id, again)
        finally:
            self._live.pop(state.id, None)
            live.changed.set()

    def _settle(self, s: Session, ended: list[_Ended]) -> list[None]:
        """Ended checks' episodes and verdicts in one transaction (a row never says final without its record), the
        episodes saved together: a hundred checks ending at once cost a few statements, not a hundred saves."""
        self.store.save_episodes_in(s, [(e.record, e.events) for e in ended])  # a done one's journal goes with it
        for e in ended:
            if e.record.status != "done":  # a check is never played again: its journal is of no more use
                clear_moves(s, self.run_id, e.record.key)
            records.update(s, e.gate_id, e.status, e.verdict, None)
        return [None] * len(ended)

    def _changed(self, gate_id: str) -> None:
        """The person's seat started or stopped asking: keep the state (off the loop) and wake the waiters."""
        live = self._live.get(gate_id)
        if live is None:
            return
        pending = live.person.pending
        status = "ask" if pending is not None else "pending"
        view = dict(pending.view) if pending is not None else {}
        expires = time.time() + (live.person.timeout or 0) if pending is not None else None
        live.expires_at = expires
        if pending is None:  # a question's leftover time after a restart was for that question only
            live.person.timeout = self.settings.person_timeout
        verdict = {"question": view.get("question"), "options": view.get("options", []),
                   "ambiguity": view.get("ambiguity", "none"), "seats": view.get("seats", []),
                   "clarifications": view.get("clarifications", []), "asked": view.get("asked"),
                   "answers": list(live.answers), **self._costs(live)}
        before = live.write

        async def write() -> None:
            if before is not None:  # in order: an earlier state never lands after a later one
                await _landed(before)
            try:
                await self._writes.write(lambda s: records.update(s, gate_id, status, verdict, expires, self.owner))
            except Exception as exc:  # the row keeps its last state: a reader in another process sees that one
                log.warning("gate %s: its %s state could not be written: %s", gate_id, status, exc)

        live.write = asyncio.get_running_loop().create_task(write())
        live.changed.set()
        live.changed = asyncio.Event()

    @staticmethod
    def _costs(live: _Live) -> dict[str, int]:
        calls = [e for e in live.ctx.recorder.events if isinstance(e, ModelCallEvent)]
        return {"model_calls": len(calls),
                "tokens": sum((c.usage.prompt_tokens or 0) + (c.usage.completion_tokens or 0) for c in calls)}

    async def _asking(self, gate_id: str) -> _Live:
        """The live check, once its person's seat is asking (resumed first if this process does not play it)."""
        live = self._live.get(gate_id)
        if live is None:
            live = await self._resume(await self._state(gate_id))
        if live is None:
            raise GateConflict(f"Gate {gate_id} is being decided by another process sharing this store (or has just "
                               "ended); answer it there, or once that process stops.")
        deadline = time.monotonic() + self.settings.timeout
        while live.person.pending is None:
            if live.task is not None and live.task.done():
                raise GateConflict(f"Gate {gate_id} asks nothing now.")
            left = deadline - time.monotonic()
            if left <= 0:
                raise GateConflict(f"Gate {gate_id} is not asking a question now.")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(live.changed.wait(), left)
            live = self._live.get(gate_id, live)
        return live

    async def _settled(self, gate_id: str, wait: float | None, answered: Request | None = None) -> Verdict:
        """The verdict once it is no longer ``pending``, or as it stands after ``wait`` seconds (a question just
        ``answered`` no longer counts as asking, though the seat may not have taken the answer yet)."""
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            live = self._live.get(gate_id)
            if live is None:
                state = await self._state(gate_id)
                if state.status in FINAL:
                    return self._verdict(state)
                live = await self._resume(state)
                if live is None:  # settled from its saved episode, or another process plays it: read the row
                    state = await self._state(gate_id)
                    left = None if deadline is None else deadline - time.monotonic()
                    if state.status != "pending" or (left is not None and left <= 0):
                        return self._verdict(state)
                    await asyncio.sleep(0.25 if left is None else min(0.25, left))
                    continue
            if live.person.pending is not None and live.person.pending is not answered:
                return await self._live_verdict(gate_id, live)
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return await self._live_verdict(gate_id, live)
            event = live.changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), left)

    async def _live_verdict(self, gate_id: str, live: _Live) -> Verdict:
        """The verdict as this process plays it, returned once the row says the same: another process sharing the
        store reads the row, and must never see ``pending`` for a check this one has already answered ``ask``."""
        while live.write is not None and not live.write.done():  # a later state may start writing meanwhile
            await _landed(live.write)
        state = await asyncio.to_thread(records.get, self.store, gate_id)
        assert state is not None
        pending = live.person.pending if live.person.waiting else None
        now = time.time()
        fields: dict[str, Any] = {**self._costs(live), "status": "ask" if pending is not None else "pending"}
        if pending is None:
            fields.update(question=None, ambiguity="none", asked=None)
        else:
            view = pending.view
            fields.update(question=view.get("question"), options=view.get("options", []),
                          ambiguity=view.get("ambiguity", "none"), seats=view.get("seats", []),
                          clarifications=view.get("clarifications", []), asked=view.get("asked"))
        state = state.model_copy(update={"status": fields.pop("status"), "updated_at": now,
                                         "expires_at": live.expires_at, "verdict": {**state.verdict, **fields}})
        return self._verdict(state)

    def _verdict(self, state: GateState) -> Verdict:
        v = state.verdict
        item = state.request["spec"]["item"]
        return Verdict(
            gate_id=state.id, key=state.key, status=state.status,
            reason=v.get("reason") or (None if state.status not in ("refuse", "error") else "no reason recorded"),
            policy=v.get("policy") or self.settings.policy, instruction=item["instruction"],
            interpretation=v.get("interpretation") if state.status == "clear" else None,
            asked=v.get("asked") if state.status == "ask" else None,
            options=v.get("options") or list(item.get("candidates") or []), question=v.get("question"),
            ambiguity=v.get("ambiguity", "none"), seats=v.get("seats", []),
            clarifications=[Clarification.model_validate(c) for c in v.get("clarifications", [])],
            conformal=v.get("conformal"), escalated=v.get("escalated"),
            latency_s=v.get("latency_s", round(state.updated_at - state.created_at, 4)),
            model_calls=v.get("model_calls", 0), tokens=v.get("tokens", 0), run_id=state.run_id,
            episode_key=state.episode_key, expires_at=state.expires_at if state.status == "ask" else None,
            answer_path=f"/g/{state.id}?t={state.token}" if state.status == "ask" else None,
            created_at=state.created_at, updated_at=state.updated_at,
        )


async def _landed(write: asyncio.Task[Any] | None) -> None:
    """Once a row's write has ended, whatever its end. A caller that goes away meanwhile (a page closed, a client
    that hung up) stops waiting but never takes the write with it, as waiting through ``gather`` would."""
    if write is None:
        return
    await asyncio.wait({write})
    if not write.cancelled():
        write.exception()  # retrieved, so that a failure is not reported again when the task is collected


def _decision(record: EpisodeRecord, policy: str) -> Decision:
    """A saved check's decision; a failed episode is an ``error`` with its reason."""
    if record.status == "done" and record.outcome is not None:
        return Decision.model_validate(record.outcome)
    return Decision.model_validate({"status": "error", "policy": policy, "reason": record.error or "failed"})


def _final(decision: Decision, record: EpisodeRecord, answers: list[dict[str, Any]], created: float) -> dict[str, Any]:
    return {**decision.model_dump(mode="json"), "model_calls": record.model_calls,
            "tokens": record.prompt_tokens + record.completion_tokens, "answers": answers,
            "latency_s": round((record.finished_at or time.time()) - created, 4)}


class SyncGate:
    """:class:`Gate` for scripts: the same calls, blocking, on an event loop of its own (a check that waits
    on a person keeps running between calls)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="lexicoord-gate", daemon=True)
        self._thread.start()
        self.gate: Gate = self._run(self._make(*args, **kwargs))

    @staticmethod
    async def _make(*args: Any, **kwargs: Any) -> Gate:
        return Gate(*args, **kwargs)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result()

    def check(self, instruction: str, **kwargs: Any) -> Verdict:
        return self._run(self.gate.check(instruction, **kwargs))

    def answer(self, gate_id: str, **kwargs: Any) -> Verdict:
        return self._run(self.gate.answer(gate_id, **kwargs))

    def get(self, gate_id: str) -> Verdict:
        return self._run(self.gate.get(gate_id))

    def close(self) -> None:
        self._run(self.gate.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> SyncGate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
