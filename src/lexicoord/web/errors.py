"""What a room refuses, said once for the room and its adapters (a leaf: both import it, neither the other)."""

from __future__ import annotations


class RoomError(Exception):
    """A request the room refuses; ``code`` is for programs, the message for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class AdapterError(RoomError):
    """A move a protocol's adapter refuses (the room passes it on as its own refusal)."""
