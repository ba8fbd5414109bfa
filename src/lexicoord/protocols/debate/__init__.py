"""Ambiguity in robot instructions: a single-agent baseline and a leader-follower debate.

A run of the study mixes both conditions, so :class:`DebateStudy` plays each
episode under the protocol its settings name; the rules live in
:mod:`~lexicoord.protocols.debate.single` and :mod:`~lexicoord.protocols.debate.rules`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lexicoord.exports import lazy

if TYPE_CHECKING:
    from lexicoord.protocols.debate.common import DebateOutcome, DebateSettings
    from lexicoord.protocols.debate.rules import LeaderFollowerDebate, rotations
    from lexicoord.protocols.debate.single import SingleAgent
    from lexicoord.protocols.debate.study import DebateStudy

# The rules are imported when first named (see lexicoord/exports.py): registering the protocol needs none of them.
__getattr__ = lazy(__name__, {"DebateOutcome": "common", "DebateSettings": "common", "DebateStudy": "study",
                              "LeaderFollowerDebate": "rules", "rotations": "rules", "SingleAgent": "single"})


def register() -> None:
    """The entry point: the debate study registers exactly as a third-party protocol would."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="debate",
        summary="Ambiguous robot instructions: a single-agent baseline and a leader-follower debate",
        title="Ambiguous robot instructions: a leader and a follower",
        protocol="lexicoord.protocols.debate.study:DebateStudy",
        task="lexicoord.tasks.instructions:TASK",
        statistics="lexicoord.protocols.debate.statistics:statistics",
        outcomes="lexicoord.protocols.debate.statistics:outcomes",
        report="lexicoord.protocols.debate.report:report",
        room="lexicoord.protocols.debate.room:DebateRoom",
        experiment="lexicoord.protocols.debate.experiment:PLAN",
        cli="lexicoord.protocols.debate.cli:app",
    ))


__all__ = ["DebateOutcome", "DebateStudy", "DebateSettings", "LeaderFollowerDebate", "SingleAgent",
           "register", "rotations"]
