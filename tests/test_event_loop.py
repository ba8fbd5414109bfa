"""The loop commands play on: uvloop by default where installed, asyncio's own on request or where it is missing."""

from __future__ import annotations

import asyncio
import inspect
import sys

import pytest
import uvloop

from lexicoord import event_loop
from lexicoord.cli.options import run_async
from lexicoord.errors import ConfigError


async def running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


@pytest.mark.parametrize("value", [None, "", "auto", "AUTO", " uvloop ", "uvloop"])
def test_a_command_plays_on_uvloop_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(event_loop.VARIABLE, raising=False)
    else:
        monkeypatch.setenv(event_loop.VARIABLE, value)
    assert isinstance(event_loop.run(running_loop()), uvloop.Loop)
    assert isinstance(run_async(running_loop()), uvloop.Loop)  # what every command's run goes through
    assert event_loop.name() == "uvloop"


@pytest.mark.parametrize("value", ["asyncio", "Asyncio "])
def test_asyncio_is_asyncios_own_loop(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(event_loop.VARIABLE, value)
    loop = event_loop.run(running_loop())
    assert not isinstance(loop, uvloop.Loop)
    assert isinstance(loop, asyncio.BaseEventLoop)
    assert event_loop.name() == "asyncio"


def test_without_uvloop_auto_falls_back_and_uvloop_says_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as on Windows, where it cannot be installed: import fails
    monkeypatch.delenv(event_loop.VARIABLE, raising=False)
    assert not isinstance(event_loop.run(running_loop()), uvloop.Loop)
    monkeypatch.setenv(event_loop.VARIABLE, "uvloop")
    with pytest.raises(ConfigError, match="uvloop is not installed"):
        event_loop.loop_factory()


@pytest.mark.parametrize("value", ["uv", "trio", "1", "asyncio,uvloop"])
def test_an_unknown_loop_is_refused_naming_the_variable_and_the_choices(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(event_loop.VARIABLE, value)
    coro = running_loop()
    with pytest.raises(ConfigError) as raised:
        event_loop.run(coro)
    assert "LEXICOORD_EVENT_LOOP" in str(raised.value) and repr(value) in str(raised.value)
    assert "auto, uvloop, asyncio" in str(raised.value)
    # Closed, not left to warn "never awaited" later, far from the cause.
    assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED


def test_ctrl_c_cancels_the_command_on_uvloop_as_on_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    """asyncio.run's contract, kept on uvloop: SIGINT cancels the main task, whose clean-up runs (a run gives its
    claims back there), then KeyboardInterrupt reaches the command."""
    import os
    import signal

    monkeypatch.delenv(event_loop.VARIABLE, raising=False)
    cleaned: list[str] = []

    async def command() -> None:
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append(type(asyncio.get_running_loop()).__module__)

    with pytest.raises(KeyboardInterrupt):
        event_loop.run(command())
    assert cleaned == ["uvloop"]


async def switch_interval() -> float:
    return sys.getswitchinterval()


async def fails() -> None:
    raise ValueError("the command failed")


@pytest.mark.parametrize("outside", [0.005, 0.004, 0.0002])
def test_threads_hand_the_lock_to_the_loop_within_a_millisecond_and_the_callers_setting_comes_back(
        outside: float) -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(outside)
    try:
        inside = event_loop.run(switch_interval())
        assert inside == pytest.approx(min(outside, event_loop.SWITCH_INTERVAL), rel=0.01), "a shorter one is kept"
        assert sys.getswitchinterval() == pytest.approx(outside, rel=0.01)
        with pytest.raises(ValueError, match="the command failed"):
            event_loop.run(fails())
        assert sys.getswitchinterval() == pytest.approx(outside, rel=0.01), "restored when the command fails too"
    finally:
        sys.setswitchinterval(before)
