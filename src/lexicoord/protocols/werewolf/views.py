"""What one player knows, as a prompt: the only function that builds a Werewolf prompt.

Everything in it comes from the events that player may see (``ctx.visible_to``) and from the term pools as
the board shows them to that player (``board.block(viewer)``), both through the core's audience rules; the
public facts (who sits and who lives) are the only state read directly, and the rules are the game's
flags as every player may know them. So a wolf's channel, a seer's result or a wolf-private term cannot
reach another player's prompt by any other road.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event
from lexicoord.lexicon import Board
from lexicoord.lexicon.events import TermsSharedEvent
from lexicoord.prompting import Prompts, fence
from lexicoord.protocols.werewolf.events import (
    ActionEvent,
    CheckResultEvent,
    DeathEvent,
    ExileEvent,
    RoleEvent,
    SpeechEvent,
    VictimEvent,
)
from lexicoord.protocols.werewolf.items import WerewolfItem
from lexicoord.protocols.werewolf.state import GameState

PROMPTS = Prompts("lexicoord.protocols.werewolf")

if TYPE_CHECKING:
    from lexicoord.protocols.werewolf.rules import WerewolfSettings


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


def _count(n: int, role: str) -> str:
    """``2 werewolves``, ``1 werewolf``, ``3 villagers``."""
    return f"{n} {role}" if n == 1 else f"{n} {role.removesuffix('f')}{'ves' if role.endswith('f') else 's'}"


def rules_text(settings: WerewolfSettings, players: int) -> str:
    """The rules as every player reads them, built from the flags the game is played by: a role that is not
    dealt is not mentioned, and each flag is stated as set, so a prompt never promises a rule the game
    does not keep."""
    s = settings
    villagers = players - sum(s.counts().values())
    dealt = [_count(s.wolves, "werewolf")] + [f"a {role}" for role, n in (("seer", s.seers), ("witch", s.witches),
                                                                         ("guard", s.guards)) if n]
    dealt += [_count(villagers, "villager")] if villagers else []
    night = ["each night the werewolves secretly choose a player to attack"]
    if s.guards:
        night.append("the guard protects one player from the attack (he may protect himself, "
                     + ("and the same player on any night)" if s.guard_repeat else
                        "but not the same player two nights running)"))
    if s.witches:
        night.append("the witch has one antidote and one poison for the whole game: she learns whom the wolves "
                     "attacked and may save them (" + ("she may save herself" if s.witch_self_save else
                                                       "she cannot save herself") + "), and may poison a player ("
                     + ("even on the night she uses the antidote, and even the player she saved)"
                        if s.both_potions_one_night else "not on a night she uses the antidote)"))
    if s.guards and s.witches and s.guard_and_save_kills:
        night.append("a victim both guarded and saved still dies")
    if s.seers:
        night.append("the seer checks one player and learns "
                     + ("their role" if s.seer_learns == "role" else "whether they are a werewolf"))
    if s.exile_rule == "majority":
        vote = "only a player voted for by more than half of the living players is exiled"
    else:
        vote = "the player with the most votes is exiled (" + {
            "nobody": "a tie exiles nobody", "random": "a tie is settled at random",
            "revote": "a tie goes to one more vote among the tied; a second tie exiles nobody"}[s.exile_tie] + ")"
    nights = "; ".join(night)
    return (f"Roles: {', '.join(dealt[:-1])} and {dealt[-1]}. {nights[0].upper()}{nights[1:]}"
            ". At dawn the night's deaths are announced in seat order; the dead are announced "
            + ("with their role" if s.reveal_roles else "without their role")
            + f". Each day everyone talks, then votes to exile one player: {vote}. The villagers win when no "
            "werewolf is left; the werewolves win when they are at least as many as the others; the game ends in "
            f"a draw after {s.max_days} days.")


def view_for(ctx: EpisodeContext[WerewolfItem], name: str, state: GameState, speeches: int, board: Board | None,
             task: str, rules: str) -> dict[str, Any]:
    """What player ``name`` may see when asked ``task``: the rules, its history, the terms it may see, who lives."""
    seen = [e for e in ctx.visible_to(name) if not isinstance(e, TermsSharedEvent)]
    return {"player": name, "players": list(state.order), "living": state.living(), "rules": rules,
            "history": history_lines(seen, name, speeches),
            "known": board.block(ctx.viewer(name), audiences=True) if board is not None else None, "task": task}


def prompt_for(view: dict[str, Any]) -> str:
    """A model's prompt, rendered from the view alone."""
    known = ""
    if view["known"] is not None:
        known = "Known terms (each coined in a conversation you heard):\n" + fence(view["known"], "KNOWN_TERMS") + "\n"
    return PROMPTS.render(
        "werewolf_turn", player=view["player"], players=", ".join(view["players"]), living=", ".join(view["living"]),
        rules=view["rules"], history=fence("\n".join(view["history"]) or "(nothing yet)", "HISTORY"), known=known,
        task=view["task"],
    )
