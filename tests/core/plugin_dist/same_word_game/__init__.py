"""Same word: every seat names a thing in one word, unseen by the others; all alike wins."""

from same_word_game.rules import SameWord, SameWordOutcome, SameWordSettings, Thing

__all__ = ["SameWord", "SameWordOutcome", "SameWordSettings", "Thing", "register"]


def register() -> None:
    """The entry point (``pyproject.toml``): every field a protocol entry has."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="same-word",
        title="Same word: name a thing alike",
        summary="Same word: every seat names a thing in one word, unseen; all alike wins",
        protocol=SameWord,
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
