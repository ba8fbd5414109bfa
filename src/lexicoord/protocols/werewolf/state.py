"""A Werewolf game's bookkeeping, apart from who is asked what: roles, the living, potions, counts, winners.

Pure functions of the state and the rule flags, so each rule is tested without a model.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from lexicoord.lexicon.uses import occurs

WOLF, SEER, WITCH, GUARD, VILLAGER = "werewolf", "seer", "witch", "guard", "villager"
ROLES = (WOLF, SEER, WITCH, GUARD, VILLAGER)


def deal(players: list[str], counts: dict[str, int], rng: random.Random) -> dict[str, str]:
    """Roles dealt at random (seeded): ``counts`` names how many of each role, villagers fill the rest."""
    specials = [role for role in (WOLF, SEER, WITCH, GUARD) for _ in range(counts.get(role, 0))]
    pool = specials + [VILLAGER] * (len(players) - len(specials))
    rng.shuffle(pool)
    return dict(zip(players, pool))


#: The rule by which a series' seed gives its games' deals, recorded in every Werewolf run's config: a run begun
#: under the older rule (``seed × 100003 + index``) is refused on a resume rather than mixed with other deals.
DEALS = "sha256"


def game_item(seed: int, index: int) -> dict[str, Any]:
    """Game ``index`` (0 for the first) of a series with base ``seed``: the one rule by which a campaign and a
    room with the same seed deal the same games. The deal and every tie-break follow from the item's seed.

    The game's seed is a one-way function (SHA-256) of the series' seed and the game's index: a game's seed,
    shown once it is over, tells nothing of the next game's deal (an affine rule would, by one division). A seed
    small enough to guess can still be found by trying every candidate; a room played for real leaves it unset."""
    digest = hashlib.sha256(f"lexicoord-werewolf-deal:{seed}:{index}".encode()).digest()
    return {"id": f"game-{index + 1}", "seed": int.from_bytes(digest[:8], "big") >> 2}


@dataclass
class GameState:
    roles: dict[str, str]
    #: Seated order (the line-up's), the base of every "in order" rule.
    order: list[str]
    alive: set[str] = field(default_factory=set)
    antidote: bool = True
    poison: bool = True
    last_protected: str | None = None
    day: int = 0

    def __post_init__(self) -> None:
        if not self.alive:
            self.alive = set(self.order)

    def living(self) -> list[str]:
        return [p for p in self.order if p in self.alive]

    def seated(self, names: list[str]) -> list[str]:
        """``names`` in seat order: how the dawn's deaths are announced, so that their order tells nobody
        which was the wolves' victim and which the witch's poison."""
        return [p for p in self.order if p in names]

    def wolves(self, alive_only: bool = True) -> list[str]:
        return [p for p in self.order if self.roles[p] == WOLF and (p in self.alive or not alive_only)]

    def holder(self, role: str) -> str | None:
        """The living holder of a one-of role."""
        return next((p for p in self.living() if self.roles[p] == role), None)

    def winner(self) -> str | None:
        """``villagers`` when no wolf lives; ``wolves`` when they are at least as many as the others."""
        wolves = len(self.wolves())
        if wolves == 0:
            return "villagers"
        if wolves >= len(self.alive) - wolves:
            return "wolves"
        return None


def plurality(votes: list[str | None]) -> tuple[list[str], Counter[str]]:
    """The most-voted targets (several on a tie) and the count; abstentions count for nobody."""
    tally = Counter(v for v in votes if v is not None)
    if not tally:
        return [], tally
    top = max(tally.values())
    return [t for t, n in tally.items() if n == top], tally


def exile(votes: list[str | None], voters: int, rule: str) -> tuple[list[str], Counter[str]]:
    """Who the vote exiles before ties are settled: under ``plurality`` the most-voted; under ``majority``
    only a target with more than half of the living voters' votes (abstentions count as voters)."""
    top, tally = plurality(votes)
    if rule == "majority" and top and tally[top[0]] * 2 <= voters:
        return [], tally
    return top, tally


def named_in(text: str, players: list[str]) -> set[str]:
    """The players a speech names, as whole names in any case (``Player 1`` is not read inside ``Player 10``)."""
    return {p for p in players if occurs(p, text)}


def pick_speaker(bids: dict[str, int], named: set[str], rng: random.Random) -> str:
    """The next speaker as Werewolf Arena draws it: among the highest bids, at random, each player named in
    the previous speech counted twice (so twice as likely as each unnamed one). ``bids`` holds only those
    who bid: the previous speaker does not, so nobody speaks twice in a row."""
    top = max(bids.values())
    tied = [p for p in bids if bids[p] == top]
    return rng.choice(tied + [p for p in tied if p in named])


def night_deaths(attacked: str | None, protected: str | None, saved: bool, poisoned: str | None,
                 guard_and_save_kills: bool) -> list[str]:
    """Who dies at dawn: the wolves' victim unless guarded or saved (both at once kills under the flag),
    and the witch's poison target whatever the guard did."""
    deaths = []
    if attacked is not None:
        guarded = protected == attacked
        if guarded and saved:
            if guard_and_save_kills:
                deaths.append(attacked)
        elif not guarded and not saved:
            deaths.append(attacked)
    if poisoned is not None and poisoned not in deaths:
        deaths.append(poisoned)
    return deaths
