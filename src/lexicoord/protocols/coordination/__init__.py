"""The LexiCoord coordination game: rules, players, manual-mode option building."""

from lexicoord.protocols.coordination.rules import ClarificationEvent, CoordinationGame, CoordinationSettings

__all__ = ["ClarificationEvent", "CoordinationGame", "CoordinationSettings"]
