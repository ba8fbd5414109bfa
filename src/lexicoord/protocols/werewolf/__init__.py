"""Werewolf: a hidden-role game with a wolves' channel, played with (COGENT) and without (ORIGIN) term pools.

The rules are in :mod:`~lexicoord.protocols.werewolf.rules`, the bookkeeping in ``state``, the record in
``events`` and the one function that builds a player's prompt in ``views``.
"""

from typing import TYPE_CHECKING

from lexicoord.exports import lazy

if TYPE_CHECKING:
    from lexicoord.protocols.werewolf.rules import WerewolfGame, WerewolfOutcome, WerewolfSettings

# The rules are imported when first named (see lexicoord/exports.py): registering the protocol needs none of them.
__getattr__ = lazy(__name__, dict.fromkeys(("WerewolfGame", "WerewolfOutcome", "WerewolfSettings"), "rules"))

__all__ = ["WerewolfGame", "WerewolfOutcome", "WerewolfSettings", "register"]


def register() -> None:
    """The entry point: Werewolf registers exactly as a third-party protocol would."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="werewolf",
        summary="Werewolf: hidden roles, a wolves' channel; ORIGIN or COGENT (public and wolf-private term pools)",
        title="Werewolf: hidden roles and a wolves' channel",
        protocol="lexicoord.protocols.werewolf.rules:WerewolfGame",
        statistics="lexicoord.protocols.werewolf.statistics:statistics",
        outcomes="lexicoord.protocols.werewolf.statistics:outcomes",
        report="lexicoord.protocols.werewolf.report:report",
        room="lexicoord.protocols.werewolf.room:WerewolfRoom",
        experiment="lexicoord.protocols.werewolf.experiment:PLAN",
        cli="lexicoord.protocols.werewolf.cli:app",
    ))
