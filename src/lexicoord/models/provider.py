"""The one interface every backend implements.

A provider turns messages and settings into raw text. It does not retry,
cache, limit concurrency or log: :class:`lexicoord.models.model.Model` does
all of that once, for every provider.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextvars import ContextVar

from lexicoord.models.types import ChatMessage, GenerateConfig, ProviderResponse

#: How many calls the code making this one keeps in flight at once (a runner's concurrency; 1 when nothing says).
#: A provider that shares one machine among its calls and fixes a call's share when it starts (the embedded model's
#: threads) sizes even the first call of a run for the others about to join it, not for an empty machine.
calls_at_once: ContextVar[int] = ContextVar("lexicoord_calls_at_once", default=1)


class TransientError(Exception):
    """A failure worth retrying (429, 5xx, a dropped connection, a timeout).

    ``retry_after`` carries the server's ``Retry-After`` in seconds when it sent one.
    ``final_message`` is the sentence shown to the user if retries run out.
    """

    def __init__(self, final_message: str, retry_after: float | None = None, kind: str = "error"):
        super().__init__(final_message)
        self.final_message = final_message
        self.retry_after = retry_after
        self.kind = kind


class Provider(ABC):
    """A backend. ``name`` is the provider prefix, ``model_name`` what follows it."""

    #: Calls to the same provider that may run at once, across all agents.
    default_concurrency: int = 8
    #: Whether the backend constrains decoding to a JSON schema itself.
    supports_json_schema: bool = False
    #: Whether a timed-out call is worth another attempt (not for an in-process model that is still busy).
    retry_timeouts: bool = True
    #: Seconds an attempt may take when no ``timeout`` is given (``None``: the model layer's default).
    default_timeout: float | None = None

    def __init__(self, name: str, model_name: str) -> None:
        self.name = name
        self.model_name = model_name

    @property
    def spec(self) -> str:
        return f"{self.name}/{self.model_name}"

    @property
    def limit_key(self) -> str:
        """Calls sharing this key share one concurrency limit."""
        return self.name

    @property
    def cache_identity(self) -> str:
        """What, besides the request, decides the reply: the spec, plus a server URL or a file path."""
        return self.spec

    async def prepare(self) -> None:
        """One-time set-up (loading weights) done before the first call, outside its timeout."""
        return None

    @abstractmethod
    async def generate(
        self, messages: Sequence[ChatMessage], config: GenerateConfig
    ) -> ProviderResponse:
        """One attempt. Raise :class:`TransientError` for what may succeed on retry."""

    async def aclose(self) -> None:  # pragma: no cover - default no-op
        return None
