"""What one player knows, as a prompt: the only function that builds a Werewolf prompt.

Everything in it comes from the events that player may see (``ctx.visible_to``) and from the term pools as
the board shows them to that player (``board.block(viewer)``), both through the core's audience rules; the
public facts (who sits and who lives) are the only state read directly. So a wolf's channel, a seer's
result or a wolf-private term cannot reach another player's prompt by any other road.
"""

from __future__ import annotations

from typing import Any

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event
from lexicoord.lexicon import Board
from lexicoord.lexicon.events import TermsSharedEvent
from lexicoord.prompting import fence, render_prompt
from lexicoord.protocols.werewolf.events import (
    ActionEvent,
    CheckResultEvent,
    DeathEvent,
    ExileEvent,
    RoleEvent,
    SpeechEvent,
    VictimEvent,
)
from lexicoord.protocols.werewolf.state import GameState


def _when(e: Event) -> str:
    phase = e.phase or ""
    return f"Night {e.round}" if phase == "night" else f"Day {e.round}" if e.round else "Start"


def history_lines(events: list[Event], name: str, speeches: int) -> list[str]:
    """The visible events as lines a model reads; only the latest ``speeches`` turns of talk are kept."""
    talk = [e for e in events if isinstance(e, SpeechEvent) and not e.failure]
    keep = {id(e) for e in talk[-speeches:]}
    lines = []
    for e in events:
        when = _when(e)
        if isinstance(e, RoleEvent):
            mates = f" The wolves are {', '.join(e.wolves)}." if e.wolves else ""
            lines.append(f"{when}: you are the {e.role}.{mates}")
        elif isinstance(e, SpeechEvent) and id(e) in keep:
            where = " (wolves' channel)" if e.channel == "wolves" else ""
            lines.append(f"{when}{where}, {e.agent}: {' '.join(e.text.split())}")
        elif isinstance(e, ActionEvent) and e.action != "bid":
            who = "you" if e.agent == name else e.agent
            lines.append(f"{when}: {who} {_ACTIONS.get(e.action, e.action)} {e.target or 'nobody'}")
        elif isinstance(e, VictimEvent):
            lines.append(f"{when}: the wolves attacked {e.victim or 'nobody'}")
        elif isinstance(e, CheckResultEvent):
            lines.append(f"{when}: you checked {e.target}: {e.role or ('a wolf' if e.wolf else 'not a wolf')}")
        elif isinstance(e, DeathEvent):
            role = f" (the {e.role})" if e.role else ""
            lines.append(f"{when}: {e.player}{role} {'died in the night' if e.cause == 'night' else 'was exiled'}")
        elif isinstance(e, ExileEvent):
            lines.append(f"{when}: vote result: {e.line()}")
    return lines


_ACTIONS = {"kill_vote": "voted to attack", "protect": "protected", "save": "saved", "poison": "poisoned",
            "check": "checked", "vote": "voted to exile"}


def view_for(ctx: EpisodeContext, name: str, state: GameState, speeches: int, board: Board | None,
             task: str) -> dict[str, Any]:
    """What player ``name`` may see when asked ``task``: its history, the terms it may see, who lives."""
    seen = [e for e in ctx.visible_to(name) if not isinstance(e, TermsSharedEvent)]
    return {"player": name, "players": list(state.order), "living": state.living(),
            "history": history_lines(seen, name, speeches),
            "known": board.block(ctx.viewer(name), audiences=True) if board is not None else None, "task": task}


def prompt_for(view: dict[str, Any]) -> str:
    """A model's prompt, rendered from the view alone."""
    known = ""
    if view["known"] is not None:
        known = "Known terms (each coined in a conversation you heard):\n" + fence(view["known"], "KNOWN_TERMS") + "\n"
    return render_prompt(
        "werewolf_turn", player=view["player"], players=", ".join(view["players"]), living=", ".join(view["living"]),
        history=fence("\n".join(view["history"]) or "(nothing yet)", "HISTORY"), known=known, task=view["task"],
    )
