"""``lexicoord mcp`` on a scripted model, the server tests/gate/test_mcp.py spawns over stdio.

``python tests/gate/mcp_scripted.py --db FILE [more options of lexicoord mcp]`` registers the model
``scripted/mcp-gate`` in this process, then runs the command itself (through ``lexicoord``'s entry point) with
the ``single`` policy on that model. The model reads the scene it is shown: an instruction that mentions
"the cup" is ambiguous (it asks :data:`QUESTION`) until the person has answered; every other one is clear.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from lexicoord.models.providers.scripted import register_script
from lexicoord.models.types import ChatMessage, GenerateConfig

MODEL = "scripted/mcp-gate"
QUESTION = "Which cup?"


def reply(messages: Sequence[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
    seen = "\n".join(m.content for m in messages)
    if "the cup" in seen and "The person answered:" not in seen:
        return {"reasoning": "Two cups stand on the table.", "verdict": "ambiguous", "question": QUESTION}
    return {"reasoning": "One reading fits the scene.", "verdict": "clear", "question": ""}


def main() -> None:
    register_script(MODEL.partition("/")[2], reply)
    from lexicoord.cli.app import main as lexicoord

    sys.argv = ["lexicoord", "mcp", "--policy", "single", "--model", MODEL, *sys.argv[1:]]
    lexicoord()


if __name__ == "__main__":
    main()
