"""The agreement gate: ask whether an instruction is clear, and act only on ``clear``.

``Gate`` (async) and ``SyncGate`` (scripts) check instructions under one policy; ``Verdict`` is what they
answer, also the JSON of the HTTP routes and the MCP tools.
"""

from lexicoord.gate.gate import Gate, GateConflict, GateError, GateInputError, SyncGate, UnknownGate
from lexicoord.gate.settings import GateSettings, read_settings
from lexicoord.gate.verdict import Decision, SeatStance, Verdict

__all__ = ["Decision", "Gate", "GateConflict", "GateError", "GateInputError", "GateSettings", "SeatStance",
           "SyncGate", "UnknownGate", "Verdict", "read_settings"]
