"""Werewolf (COGENT paper, section 4's last paragraph and section 6.5), with and without the term pools.

The game, in the order it is played:

- **Setup**: roles dealt at random from the seed (defaults: 8 players, 2 werewolves, a seer, a witch, a
  guard, 3 villagers); each player learns its own role, and each wolf who the wolves are.
- **Night d**: (1) the wolves confer in their channel, ``wolf_turns`` turns each, in seated order, then each
  living wolf votes for a victim among the living non-wolves (the most votes; a tie is settled by the seed);
  (2) the guard protects a living player (not the same one two nights running unless ``guard_repeat``);
  (3) the witch, while she holds the antidote, learns the victim and may save them (herself only with
  ``witch_self_save``), then, while she holds the poison, may poison a living player (not on a night she
  saved unless ``both_potions_one_night``, and then even the player she saved); (4) the seer checks a living
  player and learns whether they are a wolf (``seer_learns = role``: their role). At dawn the victim dies
  unless guarded or saved (both at once still kills with ``guard_and_save_kills``), and the poisoned player
  dies; the deaths are announced in seat order, so their order does not tell which was the poison.
- **Day d**: the deaths are announced (with roles when ``reveal_roles``); a check for the winner; the
  discussion, ``discussion_rounds`` turns per living player, speakers by ``speaker_order`` (``round_robin``:
  an order drawn once per game from its seed, starting one place later each day; ``bidding``, as Werewolf
  Arena: before each turn everyone but the last speaker bids 0-4 and one of the highest bids speaks, drawn
  by the seed with each player named in the last speech counted twice); a vote among the living
  (``exile_rule``: plurality, or a strict majority of the living voters); under plurality a tie exiles
  nobody, one at random (seeded), or goes to one revote among the tied (``exile_tie``; a strict majority
  cannot tie); last words by ``last_words``; a check for the winner.
- **Ends**: the villagers win when no wolf lives; the wolves when they are at least as many as the others;
  after ``max_days`` days the game is a draw.

Every action is a closed choice over the legal targets (and ``abstain``); an invalid reply is recorded with
its raw text and counts as an abstention. Every prompt states the rules as the flags set them
(:func:`~lexicoord.protocols.werewolf.views.rules_text`). Under the COGENT condition a turn of talk may carry
``[PART 1]`` speech and ``[PART 2]`` ``term = definition`` lines, judged by the lexicon layer (words written
before ``[PART 1]`` are speech too); a speaker who knows terms is asked, as in COGENT's debate, to consider or
reuse at least one (unless ``force_reuse`` is off); accepted terms
join the pool of the turn's audience (a day speech: the public pool; the wolves' channel: the wolf pool)
at once, as a share recorded with its snapshot, and every use of a known term is recorded with the turn's
audience. Each pool reaches exactly its audience as a KNOWN_TERMS block.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from lexicoord.core.audience import EVERYONE, Audience
from lexicoord.core.context import EpisodeContext
from lexicoord.core.protocol import Protocol
from lexicoord.core.seat import Answer, Request, Seat
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.lexicon import Board, Provenance, find_uses, judge_turn, read_turn
from lexicoord.lexicon.board import normal
from lexicoord.lexicon.events import candidate_events, use_events
from lexicoord.lexicon.uses import REUSE_LINE
from lexicoord.protocols.werewolf.events import (
    MODERATOR,
    ActionEvent,
    CheckResultEvent,
    DeathEvent,
    ExileEvent,
    GameOverEvent,
    NightEvent,
    RoleEvent,
    SpeechEvent,
    VictimEvent,
)
from lexicoord.protocols.werewolf.items import WerewolfItem
from lexicoord.protocols.werewolf.state import (
    GUARD,
    ROLES,
    SEER,
    VILLAGER,
    WITCH,
    WOLF,
    GameState,
    deal,
    exile,
    named_in,
    night_deaths,
    pick_speaker,
    plurality,
)
from lexicoord.protocols.werewolf.views import prompt_for, rules_text, view_for

ABSTAIN = "abstain"
WOLVES = "wolves"


class WerewolfSettings(BaseModel):
    condition: Literal["origin", "cogent"] = "origin"
    wolves: int = Field(default=2, ge=1)
    seers: int = Field(default=1, ge=0, le=1)
    witches: int = Field(default=1, ge=0, le=1)
    guards: int = Field(default=1, ge=0, le=1)
    max_days: int = Field(default=5, ge=1, le=30)
    #: Turns each living wolf takes in the wolves' channel every night.
    wolf_turns: int = Field(default=1, ge=0, le=5)
    #: Turns each living player takes in the day discussion.
    discussion_rounds: int = Field(default=1, ge=0, le=5)
    speaker_order: Literal["round_robin", "bidding"] = "round_robin"
    seer_learns: Literal["faction", "role"] = "faction"
    witch_self_save: bool = False
    both_potions_one_night: bool = False
    guard_repeat: bool = False
    guard_and_save_kills: bool = False
    reveal_roles: bool = True
    exile_rule: Literal["plurality", "majority"] = "plurality"
    exile_tie: Literal["nobody", "random", "revote"] = "nobody"
    #: A speaker who knows terms is asked to consider or reuse at least one (COGENT's debate line); off, as
    #: COGENT's cogent_free ablation, the terms are only shown.
    force_reuse: bool = True
    #: Votes are announced as each is cast (later voters see earlier ones); by default, when all are in.
    open_votes: bool = False
    last_words: Literal["none", "exiled", "all"] = "exiled"
    #: The wolves' seats use this model instead of their line-up's (two line-ups, as in Werewolf Arena).
    wolf_model: str | None = None
    #: Turns of talk a prompt shows (the latest); every action, result, vote and death is always shown.
    history_speeches: int = Field(default=16, ge=1)
    temperature: float = Field(default=0.7, ge=0, le=2)
    max_tokens: int = Field(default=160, ge=16, le=4096)

    def counts(self) -> dict[str, int]:
        return {WOLF: self.wolves, SEER: self.seers, WITCH: self.witches, GUARD: self.guards}


class Death(BaseModel):
    player: str
    day: int
    cause: str
    role: str


class WerewolfOutcome(BaseModel):
    condition: str
    #: ``villagers``, ``wolves`` or ``draw`` (the day limit).
    winner: Literal["villagers", "wolves", "draw"]
    days: int
    roles: dict[str, str]
    deaths: list[Death] = Field(default_factory=list)
    survivors: list[str] = Field(default_factory=list)
    #: Actions whose reply could not be read, counted as abstentions.
    invalid_actions: int = 0
    terms_public: int = 0
    terms_wolf: int = 0

    @model_validator(mode="after")
    def _known_roles(self) -> WerewolfOutcome:
        if any(r not in ROLES for r in self.roles.values()):
            raise ValueError("unknown role")
        return self


def check_table(settings: WerewolfSettings, names: list[str]) -> None:
    """The line-up can hold the roles, with the wolves outnumbered at the start (else the game is over)."""
    specials = sum(settings.counts().values())
    if len(set(names)) != len(names):
        raise ConfigError("Werewolf players need distinct names.")
    if specials > len(names) or settings.wolves * 2 >= len(names):
        raise ConfigError(f"{len(names)} players cannot hold {settings.wolves} wolves and {specials} special "
                          "roles with the wolves outnumbered at the start.")


class WerewolfGame(Protocol[WerewolfItem, WerewolfSettings, WerewolfOutcome]):
    name = "werewolf"
    item_model = WerewolfItem
    settings_model = WerewolfSettings
    outcome_model = WerewolfOutcome
    journal = True  # a game is long: one killed mid-way resumes from its last answer

    async def play(self, ctx: EpisodeContext[WerewolfItem]) -> WerewolfOutcome:
        settings = self.settings_of(ctx)
        names = [s.name for s in ctx.spec.lineup]
        check_table(settings, names)
        # The game's own seed (the item's), not the episode's: a pair of games that differ only in the
        # condition deals the same roles and settles ties the same way.
        rng = random.Random(ctx.seed if ctx.item.seed is None else ctx.item.seed)
        roles = deal(names, settings.counts(), rng)
        game = _Game(ctx, settings, GameState(roles=roles, order=names), rng)
        for name in game.state.wolves():
            ctx.join(name, WOLVES)
        game.seats = {spec.name: ctx.seat(game.seat_spec(spec)) for spec in ctx.spec.lineup}
        ctx.recorder.round, ctx.recorder.phase = 0, "setup"
        for name in names:
            mates = game.state.wolves() if roles[name] == WOLF else []
            ctx.emit(RoleEvent(agent=name, role=roles[name], wolves=mates, audience=Audience.only(name)))
        winner = None
        for day in range(1, settings.max_days + 1):
            game.state.day = day
            await game.night(day)
            winner = game.state.winner()
            if winner is None:
                await game.daytime(day)
                winner = game.state.winner()
            if winner is not None:
                break
        final = winner or "draw"
        ctx.recorder.phase = "end"
        ctx.emit(GameOverEvent(winner=final, roles=roles))
        return WerewolfOutcome(condition=settings.condition, winner=final, days=game.state.day, roles=roles,
                               deaths=game.deaths, survivors=game.state.living(), invalid_actions=game.invalid,
                               terms_public=game.terms["public"], terms_wolf=game.terms[WOLVES])


class _Game:
    """One game's moves; the module's docstring says in which order they happen."""

    def __init__(self, ctx: EpisodeContext[WerewolfItem], settings: WerewolfSettings, state: GameState,
                 rng: random.Random) -> None:
        self.ctx, self.settings, self.state, self.rng = ctx, settings, state, rng
        #: The speaking order, drawn once per game from its seed (round robin starts one seat later each day).
        self.seating = rng.sample(state.order, len(state.order))
        self.rules = rules_text(settings, len(state.order))
        self.seats: dict[str, Seat] = {}
        self.board = Board()
        self.deaths: list[Death] = []
        self.invalid = 0
        self.terms = {"public": 0, WOLVES: 0}

    def seat_spec(self, spec: AgentSpec) -> AgentSpec:
        if self.settings.wolf_model and self.state.roles[spec.name] == WOLF and spec.model:
            return spec.model_copy(update={"model": self.settings.wolf_model})
        return spec

    # -- asking -------------------------------------------------------------------------------------------

    def view(self, name: str, task: str) -> dict[str, Any]:
        return view_for(self.ctx, name, self.state, self.settings.history_speeches,
                        self.board if self.settings.condition == "cogent" else None, task, self.rules)

    async def choose(self, name: str, action: str, targets: list[str], task: str, audience: Audience,
                     held: list[ActionEvent] | None = None) -> str | None:
        """A closed choice over ``targets`` and abstain; an unreadable reply is an abstention, recorded. With
        ``held``, the move's event waits there (a secret ballot is announced when everyone has voted)."""
        emit = held.append if held is not None else self.ctx.emit
        options = (*targets, ABSTAIN)
        view = self.view(name, task)
        answer = await self.seats[name].answer(Request(
            kind=action, round=self.state.day, prompt=prompt_for(view), choices=options,
            view={**view, "action": action}, max_tokens=24, temperature=self.settings.temperature))
        target = _choice(answer)
        if answer.failure or target not in options:  # no choice at all is invalid too, never a quiet abstention
            self.invalid += 1
            emit(ActionEvent(agent=name, action=action, failure=answer.failure or "not a legal target",
                             raw=answer.raw, audience=audience))
            return None
        chosen = None if target == ABSTAIN else target
        emit(ActionEvent(agent=name, action=action, target=chosen, audience=audience))
        return chosen

    async def speak(self, name: str, channel: str, task: str) -> str:
        """A turn of talk; returns what was said (empty when the turn failed)."""
        audience = Audience.group(WOLVES) if channel == WOLVES else EVERYONE
        cogent = self.settings.condition == "cogent"
        known = self.board.visible(self.ctx.viewer(name))
        hint = _COIN_HINT + (" " + REUSE_LINE if known and self.settings.force_reuse else "") if cogent else ""
        view = self.view(name, task + hint)
        answer = await self.seats[name].answer(Request(
            kind="speak", round=self.state.day, prompt=prompt_for(view), view={**view, "channel": channel},
            max_tokens=self.settings.max_tokens, temperature=self.settings.temperature))
        text = str(answer.value.get("text", "")) if answer.ok and answer.value else ""
        if not cogent:
            self.ctx.emit(SpeechEvent(agent=name, channel=channel, text=text, failure=answer.failure,
                                      audience=audience))
            return text
        turn = read_turn(text)
        speech = turn.part1 if (turn.part1 or turn.part2) else text
        self.ctx.emit(SpeechEvent(agent=name, channel=channel, text=speech, failure=answer.failure,
                                  audience=audience))
        pools = {normal(e.term): e.audience for e in known}
        for use in find_uses(speech, known):
            # A faction's term said in public is recorded for the faction only: its coiner's name would
            # tell everyone else who is in the faction.
            pool = pools.get(normal(use.term), audience)
            seen_by = audience if pool.public else pool
            for used in use_events([use], name, seen_by):
                self.ctx.emit(used.model_copy(update={"public": audience.public}))
        judged = judge_turn(turn, coiner=name, board=self.board, viewer=self.ctx.viewer(name),
                            task_text=" ".join([*self.state.order, *ROLES, "wolves", "villagers"]))
        for candidate in candidate_events(judged, name):
            self.ctx.emit(candidate)
        coined = [self.board.coin(c.term, c.definition, Provenance(agent=name, round=self.state.day,
                                                                   episode=self.ctx.key))
                  for c in judged if c.accepted]
        if coined:
            self.terms[channel] += len(coined)
            self.ctx.emit(self.board.share([name], audience, entries=coined))
        return speech

    # -- the night ----------------------------------------------------------------------------------------

    async def night(self, day: int) -> None:
        ctx, s, st = self.ctx, self.settings, self.state
        ctx.recorder.round, ctx.recorder.phase = day, "night"
        wolves = st.wolves()
        for _ in range(s.wolf_turns):
            for wolf in st.wolves():
                await self.speak(wolf, WOLVES, f"Night {day}: talk with the other wolves about whom to attack.")
        prey = [p for p in st.living() if st.roles[p] != WOLF]
        votes = [await self.choose(w, "kill_vote", prey, f"Night {day}: vote for the player the wolves attack.",
                                   Audience.group(WOLVES)) for w in wolves]
        top, _ = plurality(votes)
        attacked = self.rng.choice(sorted(top)) if len(top) > 1 else (top[0] if top else None)
        protected = None
        guard = st.holder(GUARD)
        if guard:
            allowed = [p for p in st.living() if s.guard_repeat or p != st.last_protected]
            protected = await self.choose(guard, "protect", allowed, f"Night {day}: choose a player to protect "
                                          "from the wolves tonight.", Audience.only(guard))
        st.last_protected = protected
        saved, poisoned = False, None
        witch = st.holder(WITCH)
        if witch:
            if st.antidote and attacked is not None:
                ctx.emit(VictimEvent(agent=witch, victim=attacked, audience=Audience.only(witch)))
                if attacked != witch or s.witch_self_save:
                    choice = await self.choose(witch, "save", [attacked], f"Night {day}: the wolves attacked "
                                               f"{attacked}. Use your antidote to save them, or abstain.",
                                               Audience.only(witch))
                    saved = choice == attacked
                    st.antidote = st.antidote and not saved
            if st.poison and (s.both_potions_one_night or not saved):
                others = [p for p in st.living() if p != witch]
                poisoned = await self.choose(witch, "poison", others, f"Night {day}: poison a player, or abstain "
                                             "(one poison per game).", Audience.only(witch))
                st.poison = st.poison and poisoned is None
        seer = st.holder(SEER)
        if seer:
            others = [p for p in st.living() if p != seer]
            target = await self.choose(seer, "check", others, f"Night {day}: choose a player to check.",
                                       Audience.only(seer))
            if target is not None:
                ctx.emit(CheckResultEvent(agent=seer, target=target, wolf=st.roles[target] == WOLF,
                                          role=st.roles[target] if s.seer_learns == "role" else None,
                                          audience=Audience.only(seer)))
        deaths = night_deaths(attacked, protected, saved, poisoned, s.guard_and_save_kills)
        ctx.emit(NightEvent(attacked=attacked, protected=protected, saved=saved, poisoned=poisoned, deaths=deaths,
                            audience=MODERATOR))
        ctx.recorder.phase = "dawn"
        for name in st.seated(deaths):
            await self.die(name, day, "night")

    async def die(self, name: str, day: int, cause: str) -> None:
        self.state.alive.discard(name)
        role = self.state.roles[name]
        self.deaths.append(Death(player=name, day=day, cause=cause, role=role))
        self.ctx.emit(DeathEvent(player=name, cause=cause, role=role if self.settings.reveal_roles else None))
        if self.settings.last_words == "all" or (self.settings.last_words == "exiled" and cause == "exile"):
            await self.speak(name, "public", f"You are leaving the game ({cause}). Say your last words.")

    # -- the day ------------------------------------------------------------------------------------------

    async def daytime(self, day: int) -> None:
        ctx, s, st = self.ctx, self.settings, self.state
        ctx.recorder.round, ctx.recorder.phase = day, "day"
        await self.discussion(day)
        ctx.recorder.phase = "vote"
        voters = st.living()
        ballot = await self.ballot(voters, {v: [p for p in voters if p != v] for v in voters},
                                   f"Day {day}: vote for the player to exile.")
        top, tally = exile(list(ballot.values()), len(voters), s.exile_rule)
        tie = len(top) > 1
        exiled = top[0] if len(top) == 1 else None
        if tie and s.exile_tie == "random":
            exiled = self.rng.choice(sorted(top))
        elif tie and s.exile_tie == "revote":
            ctx.emit(ExileEvent(tally=dict(tally), exiled=None, tie=True, rule=f"{s.exile_rule}, revote"))
            again = await self.ballot(voters, {v: [p for p in top if p != v] for v in voters},
                                      f"Day {day}: a tie between {', '.join(top)}; vote again among them.")
            top, tally = exile(list(again.values()), len(voters), s.exile_rule)
            exiled = top[0] if len(top) == 1 else None
            tie = len(top) > 1
        ctx.emit(ExileEvent(tally=dict(tally), exiled=exiled, tie=tie, rule=f"{s.exile_rule}, tie: {s.exile_tie}"))
        if exiled is not None:
            await self.die(exiled, day, "exile")

    async def ballot(self, voters: list[str], targets: dict[str, list[str]], task: str) -> dict[str, str | None]:
        """Everyone votes; a secret ballot (the default) announces the votes when all are in, an open one
        (``open_votes``) as each is cast, so later voters see earlier votes."""
        held: list[ActionEvent] | None = None if self.settings.open_votes else []
        votes = {v: await self.choose(v, "vote", targets[v], task, EVERYONE, held) for v in voters}
        for event in held or []:
            self.ctx.emit(event)
        return votes

    async def discussion(self, day: int) -> None:
        """The game's seeded order from one place later each day, or by bids as Werewolf Arena takes them:
        everyone but the last speaker bids, one of the highest bids speaks (the seed draws, each player the
        last speech named counted twice). No quota, as in Arena: a keen bidder may take every other turn."""
        living = [p for p in self.seating if p in self.state.alive]
        task = f"Day {day}: your turn to speak to everyone."
        turns = self.settings.discussion_rounds * len(living)
        if self.settings.speaker_order == "round_robin":
            start = (day - 1) % len(living)
            for i in range(turns):
                await self.speak(living[(start + i) % len(living)], "public", task)
            return
        last, said = None, ""
        for _ in range(turns):
            bids = {}
            for p in [p for p in living if p != last] or living:
                bid = await self.choose(p, "bid", ["0", "1", "2", "3", "4"],
                                        f"Day {day}: how urgently do you want to speak next (0-4)?", Audience.only(p))
                bids[p] = int(bid) if bid is not None else 0
            last = pick_speaker(bids, named_in(said, list(bids)), self.rng)
            said = await self.speak(last, "public", task)


_COIN_HINT = ("\nYou may name a recurring idea: write [PART 1] your words, then [PART 2] new terms, one per line, as "
              "\"term = brief definition\", each used in PART 1.")


def _choice(answer: Answer) -> str | None:
    if answer.ok and answer.value:
        value = answer.value.get("choice")
        return str(value) if value is not None else None
    return None


__all__ = ["ABSTAIN", "VILLAGER", "WerewolfGame", "WerewolfOutcome", "WerewolfSettings"]
