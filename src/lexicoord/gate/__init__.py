"""The agreement gate: ask whether an instruction is clear, and act only on ``clear``.

``Gate`` (async) and ``SyncGate`` (scripts) check instructions under one policy; ``Verdict`` is what they
answer, also the JSON of the HTTP routes and the MCP tools. The names are imported when first used: the
protocol registry reads this package on every command (:func:`register`), and a command that never checks an
instruction should not pay for the store and the models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lexicoord.exports import lazy

if TYPE_CHECKING:
    from lexicoord.gate.gate import Gate, GateConflict, GateError, GateInputError, SyncGate, UnknownGate
    from lexicoord.gate.settings import GateSettings, read_settings
    from lexicoord.gate.verdict import Decision, SeatStance, Verdict

_WHERE = {
    "Gate": "gate", "GateConflict": "gate", "GateError": "gate", "GateInputError": "gate", "SyncGate": "gate",
    "UnknownGate": "gate", "GateSettings": "settings", "read_settings": "settings", "Decision": "verdict",
    "SeatStance": "verdict", "Verdict": "verdict",
}

__getattr__ = lazy(__name__, _WHERE)


def register() -> None:
    """The entry point: the gate's checks register as any protocol, so runs, viewer and report read them."""
    from lexicoord.core.registry import ProtocolEntry, register_protocol

    register_protocol(ProtocolEntry(
        name="gate",
        summary="Agreement before action: is an instruction clear, and if not, what to ask",
        title="Agreement gate",
        protocol="lexicoord.gate.protocol:GateCheck",
        statistics="lexicoord.gate.report:statistics",
        report="lexicoord.gate.report:report",
        experiment="lexicoord.gate.evaluation.experiment:PLAN",
        cli="lexicoord.gate.cli:app",
    ))

__all__ = ["Decision", "Gate", "GateConflict", "GateError", "GateInputError", "GateSettings", "SeatStance",
           "SyncGate", "UnknownGate", "Verdict", "read_settings", "register"]
