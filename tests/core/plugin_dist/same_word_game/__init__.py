"""Same word: every seat names a thing in one word, unseen by the others; all alike wins."""

from typing import TYPE_CHECKING

from lexicoord.exports import lazy

if TYPE_CHECKING:
    from same_word_game.rules import SameWord, SameWordOutcome, SameWordSettings, Thing

# The rules are imported when first named: registering (every lexicoord command does) imports none of them.
__getattr__ = lazy(__name__, dict.fromkeys(("SameWord", "SameWordOutcome", "SameWordSettings", "Thing"), "rules"))

__all__ = ["SameWord", "SameWordOutcome", "SameWordSettings", "Thing", "register"]


def register() -> None:
    """The entry point (``pyproject.toml``): every field a protocol entry has."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="same-word",
        title="Same word: name a thing alike",
        summary="Same word: every seat names a thing in one word, unseen; all alike wins",
        protocol="same_word_game.rules:SameWord",  # imported when first used (the class itself also works)
        task="same_word_game.things:TASK",
        statistics="same_word_game.report:statistics",
        outcomes="same_word_game.report:outcomes",
        report="same_word_game.report:report",
        room="same_word_game.room:SameWordRoom",
        experiment="same_word_game.experiment:PLAN",
        items="same_word_game.things:ITEMS",
        cli="same_word_game.cli:app",
        aliases=("sw",),
    ))
