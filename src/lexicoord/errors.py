"""Errors a user can act on.

Every error raised for a user's mistake or environment (a missing key, an
unreachable server, a missing file) is a :class:`LexicoordError` whose message
is one complete sentence naming the variable, URL or path to fix. The CLI
prints that sentence and exits non-zero instead of showing a traceback.
"""

from __future__ import annotations


class LexicoordError(Exception):
    """An error whose message is meant for the user as it is."""


class ConfigError(LexicoordError):
    """Bad settings: unknown provider, missing key, missing file, bad spec."""


class ModelError(LexicoordError):
    """A model call failed for good (after any retries)."""


class MissingKeyError(ConfigError):
    def __init__(self, variable: str, provider: str) -> None:
        self.variable = variable
        super().__init__(
            f"{variable} is not set: the '{provider}' provider needs it "
            f"(export {variable}=... or put it in a .env file)."
        )


class UnknownProviderError(ConfigError):
    pass


class ModelNotFoundError(ConfigError):
    pass


class ServerUnreachableError(ModelError):
    pass


class ModelTimeoutError(ModelError):
    pass


class ProviderHTTPError(ModelError):
    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class ScriptExhaustedError(ModelError):
    """A scripted model ran out of replies: a test asked for more than it set up."""


def blame(exc: BaseException, seat: str) -> None:
    """Mark ``exc`` as raised while ``seat`` answered (the innermost seat wins), so a failed episode says whose
    model failed it."""
    if getattr(exc, "seat", None) is None:
        exc.seat = seat  # type: ignore[attr-defined]


def blamed(exc: BaseException) -> str | None:
    """The seat :func:`blame` marked ``exc`` with, if any."""
    seat = getattr(exc, "seat", None)
    return seat if isinstance(seat, str) else None
