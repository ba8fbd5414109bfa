"""What a room refuses, said once for the room, its adapters and its HTTP routes (a leaf: it imports none)."""

from __future__ import annotations


class RoomError(Exception):
    """A request the room refuses; ``code`` is for programs, the message for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class AdapterError(RoomError):
    """A move a protocol's adapter refuses (the room passes it on as its own refusal)."""


class Refused(Exception):
    """An HTTP request turned down with a status, a code and a sentence (the app answers it as JSON)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
