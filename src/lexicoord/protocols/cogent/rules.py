"""COGENT and its baselines (COGENT paper, section 3, Algorithms 1 and 2, Appendix B), and nothing else.

- **SINGLE**: one answer to ``P_init(q)``.
- **VANILLA** (Algorithm 2): each agent answers ``P_init(q)`` independently (round 0); then for r = 1..R,
  A answers seeing its own and B's previous answers, and B answers seeing its own previous answer and
  A's fresh one.
- **COGENT** (Algorithm 1, defaults R=3, K=2, R_c=2): the same round 0; then each meta-round r:
  *Coin* (only while r <= R_c): each agent makes K passes over its own latest response (``P_judge`` header
  and ``P_name``: [PART 1] compact reasoning, [PART 2] ``term = definition``), every candidate judged by the
  lexicon layer and the accepted ones added to the agent's private lexicon; *Share*: the board becomes
  L_A ∪ L_B; *Use*: A answers, then B, each with what VANILLA's call of the round carries (the task, its own
  latest response, the other's: B's latest coined response for A, A's fresh answer for B) plus the lexicon
  block (KNOWN_TERMS; when terms exist, the line asking that one be considered or reused; the invitation to
  declare a new term). Terms declared in a use turn join the agent's lexicon, and A's are shared before B's
  use (Algorithm 1, lines 10-12; ``use_coinage=False`` turns this off).
- **FINALIZE** (Appendix B): one prediction from each agent's latest debate response only. Equal and valid:
  that answer; one valid: that one; two valid and different: the tie rule (default: B, the later speaker,
  who saw A's answer), recorded as a tie. No valid prediction: no answer, which is wrong.

Ablations the paper names as missing, each a variant with the same settings otherwise:

- **vanilla_matched**: VANILLA with R + R_c·K meta-rounds, so each agent makes as many calls as under
  COGENT (2 + 2·R_c·K + 2·R in all), to tell the lexicon from the extra calls.
- **cogent_private**: coinage without sharing. Each agent's KNOWN_TERMS holds its own lexicon only, and
  its use prompt shows the other's latest *public* reply (round 0 or debate), never the other's coining pass,
  whose [PART 2] would share the terms by another road.
- **cogent_free**: the shared board without the forced-reuse line.
- **cogent_log**: terms are coined, judged and recorded, but never shown: no KNOWN_TERMS anywhere, no
  share, and the use prompt shows the other's latest public reply. Uses are still detected against each
  agent's own lexicon.

Who sees what: round-0 answers and debate answers are public; a coining pass and its candidates are the
coiner's own until the share; each prompt is built from what its seat may see (its own latest response,
the other's latest public response, the board as it sees it).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from lexicoord.core.audience import EVERYONE, Audience
from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event, event_type
from lexicoord.core.protocol import Protocol
from lexicoord.core.seat import Request, Seat
from lexicoord.errors import ConfigError
from lexicoord.lexicon import Board, Provenance, Turn, find_uses, judge_turn, read_declared_terms, read_turn
from lexicoord.lexicon.coining import NEW_TERM
from lexicoord.lexicon.events import candidate_events, use_events
from lexicoord.lexicon.uses import REUSE_LINE
from lexicoord.prompting import Prompts, fence
from lexicoord.protocols.cogent.items import CogentItem
from lexicoord.tasks.benchmarks import BENCHMARKS, Benchmark

PROMPTS = Prompts("lexicoord.protocols.cogent")

Variant = Literal["single", "vanilla", "cogent", "vanilla_matched", "cogent_private", "cogent_free", "cogent_log"]
MAIN_VARIANTS: tuple[Variant, ...] = ("single", "vanilla", "cogent")
ABLATIONS: tuple[Variant, ...] = ("vanilla_matched", "cogent_private", "cogent_free", "cogent_log")


class Channel(BaseModel):
    """What a COGENT variant's lexicon channel does (the ablations switch one part off each)."""

    #: After coining, the board becomes L_A ∪ L_B, and a use prompt shows the other's coined response.
    share: bool = True
    #: KNOWN_TERMS shows the terms the agent can see (off: an empty block in every prompt).
    show: bool = True
    #: A use prompt asks that a known term be considered or reused when there is one.
    force_reuse: bool = True


CHANNELS: dict[str, Channel] = {
    "cogent": Channel(),
    "cogent_private": Channel(share=False),
    "cogent_free": Channel(force_reuse=False),
    "cogent_log": Channel(share=False, show=False, force_reuse=False),
}
Rule = Literal["agree", "one_valid", "tie", "none", "single"]


class CogentSettings(BaseModel):
    variant: Variant = "cogent"
    task: Literal["gsm8k", "folio", "mmlu"] = "gsm8k"
    #: Meta-rounds R, coining passes K per active round, coining-active rounds R_c (the paper's 3, 2, 2).
    rounds: int = Field(default=3, ge=1, le=10)
    passes: int = Field(default=2, ge=0, le=5)
    coin_rounds: int = Field(default=2, ge=0, le=10)
    #: Two valid, different predictions: the later speaker's (B, who saw A), the earlier's (A), or none.
    tie: Literal["later", "earlier", "none"] = "later"
    temperature: float = Field(default=0.7, ge=0, le=2)
    max_tokens: int = Field(default=512, ge=16, le=8192)
    #: Algorithm 1, lines 10-12: a use turn may declare terms, which join its agent's lexicon (and A's are
    #: shared before B's use). Off: the use prompt does not invite them and a use turn's definitions are not read.
    use_coinage: bool = True


@event_type
class ResponseEvent(Event):
    """One reply of an agent: ``stage`` is ``single``, ``init`` (round 0), ``coin`` (a private pass),
    ``debate`` (VANILLA) or ``use`` (COGENT); ``prediction`` is what the task reads from it (``None``: none)."""

    type: str = "response"
    stage: str
    text: str
    prediction: str | None = None
    coin_pass: int | None = None
    words: int = 0
    #: Output tokens as the backend counted them (``None``: not reported).
    tokens: int | None = None
    #: Why the reply could not be read (its raw text is ``text``), when it could not.
    failure: str | None = None
    #: The backend stopped the reply at the token limit (``max_tokens``): its text is cut short.
    truncated: bool = False

    def line(self) -> str:
        said = " ".join(self.text.split())
        return f"{self.stage}: {said[:200]}" + (f" -> {self.prediction}" if self.stage != "coin" else "")


class CogentOutcome(BaseModel):
    variant: Variant
    task: str
    #: The final prediction (``None``: no valid prediction, counted as wrong).
    answer: str | None
    correct: bool
    #: The predictions FINALIZE read: A's and B's latest (or the single agent's).
    predictions: dict[str, str | None] = Field(default_factory=dict)
    #: ``agree``, ``one_valid``, ``tie`` (two valid, different), ``none`` (no valid one), ``single``.
    rule: Rule
    rounds: int = 0
    terms_accepted: int = 0
    terms_rejected: int = 0


def calls(settings: CogentSettings) -> int:
    """Model calls one episode of the variant makes (none fails): SINGLE 1, VANILLA 2 + 2R, COGENT
    2 + 2·min(R_c, R)·K + 2R, and the call-matched VANILLA as many as COGENT."""
    coin = min(settings.coin_rounds, settings.rounds) * settings.passes
    if settings.variant == "single":
        return 1
    if settings.variant == "vanilla":
        return 2 + 2 * settings.rounds
    return 2 + 2 * coin + 2 * settings.rounds


def finalize(a: str | None, b: str | None, task: Benchmark, tie: str) -> tuple[str | None, Rule]:
    """Appendix B's FINALIZE over A's and B's latest predictions, with the stated tie rule."""
    if a is not None and b is not None:
        if task.equal(a, b):
            return b, "agree"
        return {"later": b, "earlier": a, "none": None}[tie], "tie"
    if a is not None or b is not None:
        return a if a is not None else b, "one_valid"
    return None, "none"


COIN_LINE = (f"You may also coin a new term: write it on its own line as \"{NEW_TERM}: term = brief definition\" "
             "and use it in your reasoning.")


def debate_prompt(r: int, question: str, own: str, other: str, answer_format: str, lexicon: str = "") -> str:
    """The call of a debate round: VANILLA's as it is, COGENT's with its lexicon block, and nothing else apart."""
    return PROMPTS.render("cogent_debate", round=str(r), task=question, own=fence(own, "YOURS"),
                         other=fence(other, "OTHER"), lexicon=lexicon, answer_format=answer_format)


def lexicon_block(known: str, reuse: bool, coin: bool) -> str:
    """The KNOWN_TERMS block of a use call with its optional lines; a line its placeholder left empty is dropped,
    so the block is exactly what differs from VANILLA's call."""
    text = PROMPTS.render("cogent_lexicon", known=known, reuse=REUSE_LINE if reuse else "",
                         coin=COIN_LINE if coin else "")
    return "".join(line + "\n" for line in text.splitlines() if line.strip())


def _text(answer: Any) -> str:
    return str(answer.value.get("text", "")) if answer.ok and answer.value else (answer.raw or "")


class CogentStudy(Protocol[CogentItem, CogentSettings, CogentOutcome]):
    name = "cogent"
    item_model = CogentItem
    settings_model = CogentSettings
    outcome_model = CogentOutcome

    async def play(self, ctx: EpisodeContext[CogentItem]) -> CogentOutcome:
        settings = self.settings_of(ctx)
        task = BENCHMARKS[settings.task]
        expected = 1 if settings.variant == "single" else 2
        if len(ctx.spec.lineup) != expected:
            raise ConfigError(f"{settings.variant.upper()} takes {expected} seat(s), not {len(ctx.spec.lineup)}.")
        seats = [ctx.seat(spec) for spec in ctx.spec.lineup]
        text = task.render(ctx.item.row())
        question = fence(text, "TASK")
        game = _Game(ctx, settings, task, text)
        # Round 0 is the same call under every variant (the paper: the same starting condition): one prompt and,
        # per seat, one seed drawn from the run's seed, the item and the seat, so that VANILLA and COGENT start from
        # identical answers (and a cache serves the second the first's) and their difference is the lexicon's alone.
        init = PROMPTS.render("cogent_init", task=question, answer_format=task.answer_format)
        if settings.variant == "single":
            ctx.recorder.round = 0
            reply = await game.say(seats[0], "single", init, seed=ctx.paired_seed(seats[0].name, "init"))
            prediction = game.extract(reply)
            return game.outcome(prediction, {seats[0].name: prediction}, "single", 0)
        a, b = seats
        ctx.recorder.round, ctx.recorder.phase = 0, "init"
        latest = {a.name: await game.say(a, "init", init, seed=ctx.paired_seed(a.name, "init")),
                  b.name: await game.say(b, "init", init, seed=ctx.paired_seed(b.name, "init"))}
        if settings.variant in ("vanilla", "vanilla_matched"):
            extra = min(settings.coin_rounds, settings.rounds) * settings.passes
            rounds = settings.rounds + (extra if settings.variant == "vanilla_matched" else 0)
            for r in range(1, rounds + 1):
                ctx.recorder.round, ctx.recorder.phase = r, "debate"
                for seat, other in ((a, b), (b, a)):
                    prompt = debate_prompt(r, question, latest[seat.name], latest[other.name], task.answer_format)
                    latest[seat.name] = await game.say(seat, "debate", prompt)
        else:
            rounds = settings.rounds
            await game.cogent(a, b, latest, CHANNELS[settings.variant])
        pa, pb = game.extract(latest[a.name]), game.extract(latest[b.name])
        answer, rule = finalize(pa, pb, task, settings.tie)
        return game.outcome(answer, {a.name: pa, b.name: pb}, rule, rounds)


class _Game:
    """One episode's moves, with its board; the rules above say in which order they happen."""

    def __init__(self, ctx: EpisodeContext[CogentItem], settings: CogentSettings, task: Benchmark, text: str) -> None:
        #: The item as its benchmark words it (the judge fences it itself), and fenced, as the prompts show it.
        self.ctx, self.settings, self.task, self.text = ctx, settings, task, text
        self.question = fence(text, "TASK")
        self.board = Board()
        self.accepted = self.rejected = 0
        self.proposed: dict[str, int] = {}
        #: Each reply's prediction, read once: the closing FINALIZE reads the latest replies again.
        self._predicted: dict[str, str | None] = {}

    def config(self) -> dict[str, Any]:
        return {"max_tokens": self.settings.max_tokens, "temperature": self.settings.temperature}

    async def say(self, seat: Seat, stage: str, prompt: str, *, coin_pass: int | None = None,
                  audience: Audience = EVERYONE, seed: int | None = None) -> str:
        answer = await seat.answer(Request(kind=stage, round=self.ctx.recorder.round, prompt=prompt, seed=seed,
                                           view={"task": self.question, "stage": stage}, **self.config()))
        text = _text(answer)
        prediction = None if stage == "coin" else self.extract(text)
        self.ctx.emit(ResponseEvent(agent=seat.name, stage=stage, text=text, prediction=prediction,
                                    coin_pass=coin_pass, words=len(text.split()), tokens=answer.tokens,
                                    failure=answer.failure, truncated=answer.truncated, audience=audience))
        return text

    def extract(self, text: str) -> str | None:
        """The task's reading of a reply's answer (the same text reads the same, so it is read once)."""
        if text not in self._predicted:
            self._predicted[text] = self.task.extract(text)
        return self._predicted[text]

    def block(self, viewer: Any, channel: Channel) -> str:
        return fence(self.board.block(viewer) if channel.show else "(none)", "KNOWN_TERMS")

    async def cogent(self, a: Seat, b: Seat, latest: dict[str, str], channel: Channel) -> None:
        ctx, s = self.ctx, self.settings
        public = dict(latest)  # each agent's latest reply that everyone saw (round 0, then its use replies)
        # A use turn is public, so a term declared in it is shared by its text: only where the channel shares.
        coin_in_use = s.use_coinage and channel.share
        for r in range(1, s.rounds + 1):
            ctx.recorder.round = r
            if r <= s.coin_rounds:  # Coin: K private passes per agent over its own latest response
                ctx.recorder.phase = "coin"
                for seat in (a, b):
                    for k in range(1, s.passes + 1):
                        latest[seat.name] = await self.coin(seat, latest[seat.name], r, k, channel)
            if channel.share:  # Share: L_pub = L_A ∪ L_B
                ctx.recorder.phase = "share"
                ctx.emit(self.board.share([a.name, b.name]))
            # Use: A sees B's latest (coined) response; B sees A's fresh answer; each its own latest
            ctx.recorder.phase = "use"
            for seat, other in ((a, b), (b, a)):
                viewer = ctx.viewer(seat.name)
                known = self.board.visible(viewer)
                shown = latest[other.name] if channel.share else public[other.name]
                lexicon = lexicon_block(self.block(viewer, channel), reuse=bool(known) and channel.force_reuse,
                                        coin=coin_in_use)
                prompt = debate_prompt(r, self.question, latest[seat.name], shown, self.task.answer_format, lexicon)
                text = latest[seat.name] = public[seat.name] = await self.say(seat, "use", prompt)
                for event in use_events(find_uses(text, known), seat.name, EVERYONE):
                    ctx.emit(event)
                if coin_in_use and self.judge(seat, read_declared_terms(text), r, None):
                    ctx.emit(self.board.share([a.name, b.name]))  # Algorithm 1, line 11: L_pub = L_A ∪ L_B

    async def coin(self, seat: Seat, latest: str, r: int, k: int, channel: Channel) -> str:
        viewer = self.ctx.viewer(seat.name)
        mine = [e for e in self.board.visible(viewer) if e.provenance.agent == seat.name]
        prompt = PROMPTS.render(
            "cogent_name", agent=seat.name, round=str(r), **{"pass": str(k)}, words=str(len(latest.split())),
            known=self.block(viewer, channel), proposed=str(self.proposed.get(seat.name, 0)),
            accepted=str(len(mine)), task=self.question, latest=fence(latest, "LATEST"),
        )
        private = Audience.only(seat.name)
        text = await self.say(seat, "coin", prompt, coin_pass=k, audience=private)
        turn = read_turn(text)
        # Known terms used in the private reasoning are uses too, seen by the coiner only.
        for used in use_events(find_uses(turn.part1 or text, self.board.visible(viewer)), seat.name, private):
            self.ctx.emit(used)
        self.judge(seat, turn, r, k)
        # Log-only: the next pass re-reads the reasoning without its definitions, which are never shown.
        return text if channel.show or not turn.part1 else turn.part1

    def judge(self, seat: Seat, turn: Turn, r: int, k: int | None) -> int:
        """Judge a turn's candidates; the accepted ones join the coiner's private lexicon until a share (the
        verdicts stay the coiner's, as in a coining pass). Returns how many were accepted."""
        judged = judge_turn(turn, coiner=seat.name, board=self.board, viewer=self.ctx.viewer(seat.name),
                            task_text=self.text)
        self.proposed[seat.name] = self.proposed.get(seat.name, 0) + len(judged)
        for c in judged:
            if c.accepted:
                self.board.coin(c.term, c.definition, Provenance(agent=seat.name, round=r, coin_pass=k,
                                                                 episode=self.ctx.key))
        accepted = sum(c.accepted for c in judged)
        self.accepted += accepted
        self.rejected += len(judged) - accepted
        for event in candidate_events(judged, seat.name, coin_pass=k):
            self.ctx.emit(event)
        return accepted

    def outcome(self, answer: str | None, predictions: dict[str, str | None], rule: Rule, rounds: int) -> CogentOutcome:
        gold = self.ctx.item.answer
        return CogentOutcome(variant=self.settings.variant, task=self.settings.task, answer=answer,
                             correct=self.task.equal(answer, gold), predictions=predictions,
                             rule=rule, rounds=rounds,
                             terms_accepted=self.accepted, terms_rejected=self.rejected)
