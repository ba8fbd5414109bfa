"""The gate's policies, each a thin use of a protocol's own rules (the rules stay in ``protocols/``).

``single`` and ``debate`` play the debate paper's baseline and leader-follower debate; ``coalition`` plays
LexiCoord's game with the person as the leader who clarifies; ``conformal`` is KnowNo's prediction set;
``adaptive`` runs a cheap one first and one of the full ones only when the cheap one is unsure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lexicoord.core.spec import AgentSpec
from lexicoord.gate.deliberation import PERSON, Deliberation
from lexicoord.gate.settings import GateSettings
from lexicoord.gate.verdict import Decision

Decide = Callable[[Deliberation], Awaitable[Decision]]


def policy(name: str) -> Decide:
    """The policy's function, imported when used."""
    if name == "single":
        from lexicoord.gate.policies.single import decide
    elif name == "debate":
        from lexicoord.gate.policies.debate import decide
    elif name == "coalition":
        from lexicoord.gate.policies.coalition import decide
    elif name == "conformal":
        from lexicoord.gate.policies.conformal import decide
    elif name == "adaptive":
        from lexicoord.gate.policies.adaptive import decide
    else:
        raise KeyError(name)
    return decide


def lineup(settings: GateSettings, person: AgentSpec | None = None) -> list[AgentSpec]:
    """The seats a check under ``settings`` may use: models in turn from ``settings.models``, and the person (a
    person at the gate's page, or ``person`` when given: an evaluation's simulated one)."""
    roles: list[str] = []
    names: tuple[str, ...] = (settings.first, settings.then) if settings.policy == "adaptive" else (settings.policy,)
    for name in names:
        if name == "single":
            roles += ["agent"]
        elif name == "debate":
            roles += ["leader"] + ["follower"] * settings.followers
        elif name == "coalition":
            roles += ["player"] * settings.players + ["writer"]
        elif name == "conformal":
            roles += ["scorer", "writer"]
    if roles.count("writer") > 1:
        roles.remove("writer")
    seats, counts = [], {r: 0 for r in roles}
    for i, role in enumerate(roles):
        counts[role] += 1
        many = roles.count(role) > 1
        name = f"{role}-{counts[role]}" if many else role
        seats.append(AgentSpec(name=name, model=settings.models[i % len(settings.models)], role=role))
    seats.append(person or AgentSpec(name=PERSON, kind="human", role="person"))
    return seats
