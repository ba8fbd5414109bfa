"""Protocols: the rules of play, one module each."""

from lexicoord.protocols.base import EpisodeContext, Protocol

__all__ = ["EpisodeContext", "Protocol"]
