"""The LexiCoord coordination game: rules, requests, simulated people, manual-mode option building."""

from typing import TYPE_CHECKING

from lexicoord.exports import lazy

if TYPE_CHECKING:
    from lexicoord.protocols.coordination.rules import (
        ClarificationEvent,
        CoordinationGame,
        CoordinationOutcome,
        CoordinationSettings,
    )

# The rules are imported when first named (see lexicoord/exports.py): registering the protocol needs none of them.
__getattr__ = lazy(__name__, dict.fromkeys(
    ("ClarificationEvent", "CoordinationGame", "CoordinationOutcome", "CoordinationSettings"), "rules"))

__all__ = ["ClarificationEvent", "CoordinationGame", "CoordinationOutcome", "CoordinationSettings", "register"]


def register() -> None:
    """The entry point: the coordination game registers exactly as a third-party protocol would."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="coordination",
        summary="LexiCoord: agree on one meaning of an ambiguous word, with clarification rounds",
        title="Coordination game: agree on what a word means",
        protocol="lexicoord.protocols.coordination.rules:CoordinationGame",
        task="lexicoord.tasks.ambiguous:TASK",
        statistics="lexicoord.protocols.coordination.statistics:statistics",
        outcomes="lexicoord.protocols.coordination.statistics:outcomes",
        report="lexicoord.protocols.coordination.report:report",
        items="lexicoord.protocols.coordination.items:ITEMS",
        room="lexicoord.protocols.coordination.room:CoordinationRoom",
        experiment="lexicoord.protocols.coordination.experiment:PLAN",
        cli="lexicoord.protocols.coordination.cli:app",
        aliases=("coord",),
    ))
