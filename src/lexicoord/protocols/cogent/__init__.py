"""COGENT (coined terms over sequential debate) with its baselines SINGLE and VANILLA, on GSM8K, FOLIO, MMLU.

The rules are in :mod:`~lexicoord.protocols.cogent.rules`; the coin-share-use layer they use is
:mod:`lexicoord.lexicon`, which knows nothing of this protocol.
"""

from typing import TYPE_CHECKING

from lexicoord.exports import lazy

if TYPE_CHECKING:
    from lexicoord.protocols.cogent.rules import CogentOutcome, CogentSettings, CogentStudy, ResponseEvent, finalize

# The rules are imported when first named (see lexicoord/exports.py): registering the protocol needs none of them.
__getattr__ = lazy(__name__, dict.fromkeys(
    ("CogentOutcome", "CogentSettings", "CogentStudy", "ResponseEvent", "finalize"), "rules"))

__all__ = ["CogentOutcome", "CogentSettings", "CogentStudy", "ResponseEvent", "finalize", "register"]


def register() -> None:
    """The entry point: COGENT registers exactly as a third-party protocol would."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="cogent",
        summary="COGENT: coin, share and use named terms in a two-agent sequential debate (with SINGLE, VANILLA)",
        title="COGENT: a two-agent debate with coined terms",
        protocol="lexicoord.protocols.cogent.rules:CogentStudy",
        task="lexicoord.tasks.benchmarks:BENCHMARKS",
        statistics="lexicoord.protocols.cogent.statistics:statistics",
        outcomes="lexicoord.protocols.cogent.statistics:outcomes",
        report="lexicoord.protocols.cogent.report:report",
        items="lexicoord.protocols.cogent.items:ITEMS",
        room="lexicoord.protocols.cogent.room:CogentRoom",
        experiment="lexicoord.protocols.cogent.experiment:PLAN",
        cli="lexicoord.protocols.cogent.cli:app",
    ))
