"""Gates on scripted models and a SQLite file of the test's own."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from lexicoord.gate import Gate
from lexicoord.models.providers.scripted import Script, register_script

_names = itertools.count()


def proposal(verdict: str, question: str = "") -> dict[str, Any]:
    return {"reasoning": "I read the scene.", "verdict": verdict, "question": question}


def feedback(stance: str, alternative: str = "") -> dict[str, Any]:
    return {"stance": stance, "reasoning": "I checked the proposal.", "alternative": alternative}


def choice(option: str) -> dict[str, Any]:
    return {"choice": option, "justification": "That is what it means here."}


def scripted(script: Script) -> str:
    """A fresh ``scripted/NAME`` serving ``script``."""
    name = f"gate{next(_names)}"
    register_script(name, script)
    return f"scripted/{name}"


MakeGate = Callable[..., Gate]


@pytest.fixture
async def make_gate(tmp_path: Path) -> AsyncIterator[MakeGate]:
    made: list[Gate] = []

    def make(policy: str, script: Script, **options: Any) -> Gate:
        gate = Gate(policy, [scripted(script)], db=str(tmp_path / "gate.db"), **options)
        made.append(gate)
        return gate

    yield make
    for gate in made:
        await gate.aclose()
