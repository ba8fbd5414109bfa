"""Line-ups and datasets of the coordination game, as commands and experiment files write them."""

from __future__ import annotations

import random
from collections.abc import Sequence

from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.protocols.coordination.simulated import POLICIES
from lexicoord.tasks.ambiguous import TASK, AmbiguityItem
from lexicoord.tasks.indexed import pick


def parse_agent(text: str, index: int) -> AgentSpec:
    """``name=provider/model``, ``name=sim:policy[:p]``, ``name=human``, or a bare ``provider/model``."""
    name, sep, what = text.partition("=")
    if not sep:
        name, what = f"a{index + 1}", text
    name, what = name.strip(), what.strip()
    if not name or not what:
        raise ConfigError(f"Agent '{text}' is not of the form name=provider/model or name=sim:policy.")
    if what == "human":
        return AgentSpec(name=name, kind="human")
    if what.startswith("sim:"):
        policy, _, p = what[4:].partition(":")
        if policy not in POLICIES:
            raise ConfigError(f"Unknown simulated policy '{policy}' in '{text}'; known: {', '.join(POLICIES)}.")
        if p and policy != "noisy":
            raise ConfigError(f"Only the noisy policy takes a probability ('{text}').")
        try:
            prob = float(p) if p else None
        except ValueError:
            raise ConfigError(f"The probability in '{text}' is not a number.") from None
        if prob is not None and not 0.0 <= prob <= 1.0:
            raise ConfigError(f"The probability in '{text}' must be between 0 and 1.")
        options = {"policy": policy, **({"p": prob} if prob is not None else {})}
        return AgentSpec(name=name, kind="simulated", options=options)
    if "/" not in what:
        raise ConfigError(f"Agent '{text}': '{what}' is neither provider/model, sim:POLICY nor human.")
    return AgentSpec(name=name, kind="llm", model=what)


def seat_text(seat: AgentSpec) -> str:
    """How a seat is written after its name: ``provider/model``, ``sim:policy[:p]`` or ``human``."""
    if seat.kind == "simulated":
        p = seat.options.get("p")
        return f"sim:{seat.options.get('policy')}" + (f":{p}" if p is not None else "")
    return "human" if seat.kind == "human" else str(seat.model)


def lineup_from(agents: list[str] | None, model: str, count: int, temperature: float | None) -> list[AgentSpec]:
    specs = [parse_agent(a, i) for i, a in enumerate(agents)] if agents else [
        AgentSpec(name=f"a{i + 1}", model=model) for i in range(count)
    ]
    if len({s.name for s in specs}) != len(specs):
        raise ConfigError("Two agents have the same name; give each a name with name=...")
    if len(specs) < 2:
        raise ConfigError("The game needs at least two agents.")
    if temperature is not None:
        specs = [s.model_copy(update={"options": {**s.options, "temperature": temperature}}) if s.kind == "llm" else s for s in specs]
    return specs


def dataset_from(source: str, limit: int | None, sample_seed: int | None, category: str | None
                 ) -> Sequence[AmbiguityItem]:
    """``builtin``, a JSONL path, ``coarsewsd:FOLDER``, ``wictsv:FOLDER`` or ``hf:NAME``; optionally filtered, shuffled and cut.

    A file is checked to its last line, but only the chosen items are read back from it (see
    :mod:`lexicoord.tasks.indexed`): one item of a large file costs the memory of one item. The shuffle draws
    the same order as shuffling the items themselves would, so a seed picks the same items as before.
    """
    items = TASK.index(source, keep=(lambda i: i.category == category) if category else None)
    if category and not items:
        raise ConfigError(f"No items of category '{category}' in {source}.")
    if not items:
        raise ConfigError(f"{source} holds no items.")
    order: Sequence[int] = range(len(items))
    if sample_seed is not None:
        order = random.Random(sample_seed).sample(range(len(items)), len(items))
    return pick(items, order[:limit] if limit else order)
