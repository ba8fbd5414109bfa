"""One browser connection: a send queue that never lets a slow client hold up a room.

Room states are snapshots, so a connection keeps only the newest one not yet
sent: a client that falls behind skips to the present instead of queueing
stale states. A state equal to the one the page already has is not sent: a
page gets a frame only when its own projection changed, so the number and
timing of its frames tell nothing of moves it may not see (a villager's page
is as quiet through the witch's night as through an empty one). Other
messages (errors, statistics) queue, up to a bound.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

from starlette.websockets import WebSocket

MAX_QUEUED = 64


class Connection:
    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self._state: str | None = None
        #: The last state handed to the socket: what the page shows now.
        self._shown: str | None = None
        self._queue: deque[str] = deque(maxlen=MAX_QUEUED)
        self._wake = asyncio.Event()
        self._closed = False
        self.sender = asyncio.create_task(self._send_loop())

    def send_state(self, text: str) -> None:
        if text == self._shown:  # back to what the page shows: whatever was pending need not go
            self._state = None
            return
        if text != self._state:
            self._state = text
            self._wake.set()

    def send(self, text: str) -> None:
        self._queue.append(text)
        self._wake.set()

    async def _send_loop(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    await self.ws.send_text(self._queue.popleft())
                if self._state is not None:
                    text, self._state = self._state, None
                    self._shown = text
                    await self.ws.send_text(text)
        except Exception:  # the socket closed under us: the receive side ends the connection
            self._closed = True

    async def flush(self) -> None:
        """Wait until everything queued so far has been handed to the socket (used before closing)."""
        for _ in range(100):
            if not self._queue and self._state is None or self._closed:
                return
            await asyncio.sleep(0.01)

    async def close(self, code: int, reason: str) -> None:
        """Send what is queued, then close with ``code`` and a one-sentence ``reason`` the page can show."""
        await self.flush()
        with contextlib.suppress(Exception):  # already gone: nothing to tell
            await self.ws.close(code=code, reason=reason)

    async def aclose(self) -> None:
        self.sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.sender
