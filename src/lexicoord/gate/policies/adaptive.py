"""``adaptive``: the debate paper's adaptive trigger. The cheap check first (``single``: one call, or
``conformal``); only when it is not ``clear`` does the full policy (``debate`` or ``coalition``) decide, from the
start, and its verdict stands. A clear instruction costs one model call; an unclear one the full deliberation.
"""

from __future__ import annotations

from lexicoord.gate.deliberation import Deliberation
from lexicoord.gate.verdict import Decision


async def decide(d: Deliberation) -> Decision:
    from lexicoord.gate.policies import policy

    full = d.settings
    d.settings = full.model_copy(update={"clarifications": 0})  # the cheap check never asks the person
    try:
        first = await policy(full.first)(d)
    finally:
        d.settings = full
    if first.status == "clear":
        return first.model_copy(update={"policy": "adaptive", "escalated": False})
    decided = await policy(full.then)(d)
    return decided.model_copy(update={"policy": "adaptive", "escalated": True})
