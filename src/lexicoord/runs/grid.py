"""Episodes of a run: task items x protocol settings x line-ups x repetitions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lexicoord.core.spec import AgentSpec, EpisodeSpec


def grid(
    items: Iterable[dict[str, Any]],
    lineups: Sequence[Sequence[AgentSpec]],
    settings: Sequence[dict[str, Any]] = ({},),
    repetitions: int = 1,
) -> list[EpisodeSpec]:
    """Every combination, items outermost. Each item needs an ``id``."""
    out = []
    for item in items:
        if "id" not in item:
            raise ValueError(f"task item has no 'id': {str(item)[:120]}")
        for setting in settings:
            for lineup in lineups:
                for rep in range(repetitions):
                    out.append(
                        EpisodeSpec(
                            item_id=str(item["id"]), item=dict(item), settings=dict(setting),
                            lineup=list(lineup), repetition=rep,
                        )
                    )
    return out
