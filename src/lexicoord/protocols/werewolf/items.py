"""What a Werewolf game's item is: no text at all, only the seed the deal is drawn from.

A campaign's items and a room's games are made by :func:`~lexicoord.protocols.werewolf.state.game_item` (or a
room's secret seed), never read from a user's file, so a key the rules do not know is a mistake and is refused.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class WerewolfItem(BaseModel):
    """A game of a series: its name and the seed its roles and tie-breaks are drawn from (``None``: the
    episode's own seed, so the game is still dealt, but a pair of conditions no longer shares the deal)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    seed: int | None = None
