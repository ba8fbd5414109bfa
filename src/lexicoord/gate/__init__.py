"""The agreement gate: ask whether an instruction is clear, and act only on ``clear``.

``Gate`` (async) and ``SyncGate`` (scripts) check instructions under one policy; ``Verdict`` is what they
answer, also the JSON of the HTTP routes and the MCP tools. The names are imported when first used: the
protocol registry loads ``lexicoord.gate.protocol`` on every command, and a command that never checks an
instruction should not pay for the store and the models.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lexicoord.gate.gate import Gate, GateConflict, GateError, GateInputError, SyncGate, UnknownGate
    from lexicoord.gate.settings import GateSettings, read_settings
    from lexicoord.gate.verdict import Decision, SeatStance, Verdict

_WHERE = {
    "Gate": "gate", "GateConflict": "gate", "GateError": "gate", "GateInputError": "gate", "SyncGate": "gate",
    "UnknownGate": "gate", "GateSettings": "settings", "read_settings": "settings", "Decision": "verdict",
    "SeatStance": "verdict", "Verdict": "verdict",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'lexicoord.gate' has no attribute {name!r}")
    return getattr(import_module(f"lexicoord.gate.{_WHERE[name]}"), name)


__all__ = ["Decision", "Gate", "GateConflict", "GateError", "GateInputError", "GateSettings", "SeatStance",
           "SyncGate", "UnknownGate", "Verdict", "read_settings"]
