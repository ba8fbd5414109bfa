"""A study file: what a participant goes through, from consent to completion code, checked whole before serving.

The file is TOML, read as an experiment file is (:mod:`lexicoord.experiments.source`: ``${VAR}`` filled from
the environment, every problem one sentence at its line, exit 2). Its sections, in a participant's order:

```toml
name = "lexicoord-pilot"            # the study's id: its links are /studies/<name>/
protocol = "coordination"
title = "A word game"

[game]                               # the protocol's room settings (as a room's form has them)
seat_timeout = 120

[group]
people = 2                           # people per game
games = 3                            # games each group plays, one item each
agents = [{ name = "Ava", model = "local/smollm2-135m" }]

[consent]        text = "..."        # Markdown; declining ends with the no_consent code
[instructions]   text = "..."
[quiz]           attempts = 2        # [[quiz.questions]] id, text, options, answer
[lobby]          timeout = 300       # fill_with_agents = true fills a short group instead of sending it home
[dropout]        grace = 60          # seconds away before a model takes the seat over
[survey]                             # [[survey.questions]] likert / choice / text; expect = an attention check
[completion]     redirect = "https://app.prolific.com/submissions/complete?cc={code}"
[completion.codes]  completed = "..."  no_consent = "..."  failed_quiz = "..."  no_group = "..."  dropped = "..."
[bonus]          per_game = 0.25     # for each game whose outcome has `when` true

[[conditions]]                       # between-subjects treatments: each new group is assigned one
name = "vanilla"                     # by balanced randomisation (blocks from the study's seed)
game = { variant = "vanilla" }       # over [game]; agents = [...] replaces [group] agents; model = the stand-in
brief = { text = "..." }             # Markdown shown above the group's game; weight = 2 doubles its share
```
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar

from pydantic import AfterValidator, BaseModel, Field, ValidationError, field_validator, model_validator

from lexicoord.errors import ConfigError
from lexicoord.experiments.experiment import DataPath, ModelName, Strict, problems_of
from lexicoord.experiments.source import ExperimentError, Problem, Source, apply_overrides, read
from lexicoord.runs.names import check_run_name

#: The outcomes a participant's session can end with, each with its own completion code.
OUTCOMES = ("completed", "no_consent", "failed_quiz", "no_group", "dropped")
Outcome = Literal["completed", "no_consent", "failed_quiz", "no_group", "dropped"]
IDENT = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
CODE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _ident(value: str) -> str:
    if not IDENT.match(value):
        raise ValueError("an id is 1 to 40 lower-case letters, digits or _, starting with a letter")
    return value


Ident = Annotated[str, AfterValidator(_ident)]


class Question(Protocol):
    id: str


Q = TypeVar("Q", bound=Question)


class Page(Strict):
    """A page of Markdown text the participant reads (written here, or in a file beside the study's)."""

    title: str = ""
    text: str = ""
    file: DataPath | None = None

    @model_validator(mode="after")
    def _one_text(self) -> Page:
        if bool(self.text.strip()) == bool(self.file):
            raise ValueError("give the page's Markdown as text or as file, one of the two")
        return self

    def markdown(self) -> str:
        return Path(self.file).read_text(encoding="utf-8") if self.file else self.text


def _twice(names: Sequence[str]) -> str | None:
    """The first name (in sorted order) that ``names`` holds twice, if any."""
    return next(iter(sorted({n for n in names if names.count(n) > 1})), None)


def _distinct_ids(questions: list[Q]) -> list[Q]:
    doubled = _twice([q.id for q in questions])
    if doubled:
        raise ValueError(f"question id {doubled!r} is used twice")
    return questions


class QuizQuestion(Strict):
    id: Ident
    text: str = Field(min_length=1)
    options: list[str] = Field(min_length=2, max_length=12)
    answer: str

    @model_validator(mode="after")
    def _answer_offered(self) -> QuizQuestion:
        if self.answer not in self.options:
            raise ValueError(f"the answer {self.answer!r} is not one of the options")
        if len(set(self.options)) != len(self.options):
            raise ValueError("two options are the same")
        return self


class Quiz(Strict):
    """A comprehension check after the instructions: all answers right to pass, ``attempts`` tries."""

    attempts: int = Field(default=2, ge=1, le=10)
    questions: Annotated[list[QuizQuestion], AfterValidator(_distinct_ids)] = Field(default_factory=list)


class SurveyQuestion(Strict):
    """One question of the exit survey. ``expect`` makes it an attention check: its answer is recorded as
    passed or failed (never a reason to end the session)."""

    id: Ident
    kind: Literal["likert", "choice", "text"]
    text: str = Field(min_length=1)
    #: A choice's options; a Likert scale's points run 1 .. ``scale`` with ``labels`` at its two ends.
    options: list[str] = Field(default_factory=list, max_length=20)
    scale: int = Field(default=7, ge=2, le=11)
    labels: tuple[str, str] = ("Strongly disagree", "Strongly agree")
    required: bool = True
    max_length: int = Field(default=2000, ge=1, le=20000)
    expect: str | int | None = None

    @model_validator(mode="after")
    def _shape(self) -> SurveyQuestion:
        if self.kind == "choice" and len(self.options) < 2:
            raise ValueError("a choice question needs at least two options")
        if self.kind != "choice" and self.options:
            raise ValueError(f"options belong to choice questions, not {self.kind}")
        if self.expect is not None:
            if self.kind == "choice" and self.expect not in self.options:
                raise ValueError(f"expect {self.expect!r} is not one of the options")
            if self.kind == "likert" and not (isinstance(self.expect, int) and 1 <= self.expect <= self.scale):
                raise ValueError(f"expect is a point of the scale, 1 to {self.scale}")
            if self.kind == "text" and not (isinstance(self.expect, str) and self.expect.strip()):
                raise ValueError("expect of a text question is the text to be written (in quotes)")
        return self


class Survey(Strict):
    questions: Annotated[list[SurveyQuestion], AfterValidator(_distinct_ids)] = Field(default_factory=list)


class Agent(Strict):
    name: str = Field(min_length=1, max_length=24)
    model: ModelName


def _distinct_agents(agents: list[Agent]) -> list[Agent]:
    names = [a.name.lower() for a in agents]
    if len(set(names)) != len(names):
        raise ValueError("two agents have the same name")
    return agents


def _own_game_keys(value: dict[str, Any]) -> dict[str, Any]:
    """A room's settings as a study gives them: what the study sets elsewhere is not written here."""
    homes = {"agents": "[group] agents", "max_people": "[group] people", "protocol": "protocol",
             "seed": "seed", "mode": "the study (always automatic)"}
    for key, home in homes.items():
        if key in value:
            raise ValueError(f"'{key}' is set by {home}, not in [game]")
    return value


Agents = Annotated[list[Agent], AfterValidator(_distinct_agents)]
GameSettings = Annotated[dict[str, Any], AfterValidator(_own_game_keys)]


class Group(Strict):
    """Who plays each game: ``people`` participants (grouped in arrival order) and the study's agents."""

    people: int = Field(ge=1, le=8)
    games: int = Field(default=1, ge=1, le=100)
    agents: Agents = Field(default_factory=list, max_length=8)
    #: The model that fills an empty seat (lobby timeout) and takes over a dropout; default: the first agent's.
    model: ModelName | None = None

    @model_validator(mode="after")
    def _stand_in(self) -> Group:
        if self.model is None:
            if not self.agents:
                raise ValueError("name the model that fills empty seats and takes over dropouts (group.model)")
            self.model = self.agents[0].model
        return self

    @property
    def stand_in(self) -> str:
        assert self.model is not None
        return self.model


class Lobby(Strict):
    #: Seconds a participant may wait for a group before the lobby gives up on them.
    timeout: float = Field(default=300, ge=5, le=24 * 3600)
    #: At the timeout, fill the group's empty seats with the group's model instead of ending with ``no_group``.
    fill_with_agents: bool = False


class Dropout(Strict):
    #: Seconds a participant in a game may be away (no page open) before a model takes over their seat.
    grace: float = Field(default=60, ge=5, le=3600)
    #: A participant who lets a move time out is taken over at once (else only absence counts).
    idle: bool = True


class Codes(Strict):
    completed: str
    no_consent: str
    failed_quiz: str
    no_group: str
    dropped: str

    @model_validator(mode="after")
    def _codes(self) -> Codes:
        values = [getattr(self, o) for o in OUTCOMES]
        for outcome, code in zip(OUTCOMES, values, strict=True):
            if not CODE.match(code):
                raise ValueError(f"{outcome}: a code is 1 to 64 letters, digits, _ or -")
        if len(set(values)) != len(values):
            raise ValueError("two outcomes have the same code; each outcome needs its own")
        return self

    def of(self, outcome: Outcome) -> str:
        return str(getattr(self, outcome))


class Completion(Strict):
    codes: Codes
    #: Where the completion page sends the participant, with ``{code}`` filled (Prolific's completion URL).
    redirect: str | None = None

    @field_validator("redirect")
    @classmethod
    def _template(cls, v: str | None) -> str | None:
        if v is None:
            return v
        if not re.match(r"^https?://[^\s/]+", v):
            raise ValueError("the redirect is an http(s) address")
        if "{code}" not in v or re.search(r"\{(?!code\})", v):
            raise ValueError("the redirect holds {code} where the code goes, and no other {...}")
        return v


class Bonus(Strict):
    """What each participant earns beyond the base pay, written as Prolific's bulk-bonus CSV."""

    #: For each game the participant played to its end whose outcome has ``when`` true.
    per_game: float = Field(default=0.0, ge=0, le=1000)
    when: str = "converged"
    #: For reaching the completion code with the ``completed`` outcome.
    completed: float = Field(default=0.0, ge=0, le=1000)


class Condition(Strict):
    """One between-subjects treatment: what it changes for the groups assigned to it (oTree's treatments,
    Empirica's factors). Whatever it does not name is the study's own."""

    name: Ident
    #: Its share of the groups: a block of the assignment holds each condition ``weight`` times.
    weight: int = Field(default=1, ge=1, le=20)
    #: The protocol's room settings it changes (over the study's ``[game]``).
    game: GameSettings = Field(default_factory=dict)
    #: Its agents (their models and how many), instead of ``[group] agents``.
    agents: Agents | None = Field(default=None, max_length=8)
    #: The model that fills an empty seat and takes over a dropout in its groups (default: the study's).
    model: ModelName | None = None
    #: Markdown shown to its groups' participants above their game.
    brief: Page | None = None



def _distinct_names(conditions: list[Condition]) -> list[Condition]:
    doubled = _twice([c.name for c in conditions])
    if doubled:
        raise ValueError(f"condition {doubled!r} is named twice")
    return conditions


class StudyFile(Strict):
    name: str
    protocol: str
    title: str = "A study"
    description: str = ""
    seed: int = 0
    #: The protocol's room settings (its room form's keys: ``seat_timeout``, ``clarification_bound`` ...).
    game: GameSettings = Field(default_factory=dict)
    #: The sets of items the groups' games draw from, by name (``NAME = "WHERE"``), as the protocol's item source
    #: reads them (the coordination game: ``builtin``, a JSONL file, ``coarsewsd:FOLDER``, ``wictsv:FOLDER``;
    #: COGENT: ``gsm8k = "test.jsonl"``). None: the protocol's own default.
    items: dict[str, DataPath] = Field(default_factory=dict)
    group: Group
    consent: Page
    instructions: Page
    quiz: Quiz = Field(default_factory=Quiz)
    lobby: Lobby = Field(default_factory=Lobby)
    dropout: Dropout = Field(default_factory=Dropout)
    survey: Survey = Field(default_factory=Survey)
    completion: Completion
    bonus: Bonus = Field(default_factory=Bonus)
    #: Options of every model (``timeout``, ``base_url``, ``n_ctx`` ...), as ``--option`` gives them.
    options: dict[str, Any] = Field(default_factory=dict)
    #: Between-subjects treatments; none: every group plays the study's own settings.
    conditions: Annotated[list[Condition], AfterValidator(_distinct_names)] = Field(default_factory=list, max_length=20)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        try:
            return check_run_name(value)
        except ConfigError as exc:
            raise ValueError(str(exc).rstrip(".")) from None

    @property
    def run_id(self) -> str:
        """The run every group's games are stored in (one report covers the study)."""
        return f"study-{self.name}"

    def models(self) -> list[str]:
        """Every model the study seats, the stand-in first."""
        names = [self.group.stand_in, *(a.model for a in self.group.agents)]
        for c in self.conditions:
            names += [self.stand_in(c.name), *(a.model for a in self.agents(c.name))]
        return list(dict.fromkeys(names))

    def condition(self, name: str | None) -> Condition | None:
        """The condition named ``name`` (None: the study has none, or no name was given)."""
        return next((c for c in self.conditions if c.name == name), None) if name else None

    def agents(self, condition: str | None = None) -> list[Agent]:
        """The agents of a group of ``condition`` (the study's own where the condition names none)."""
        c = self.condition(condition)
        return list(c.agents) if c is not None and c.agents is not None else list(self.group.agents)

    def stand_in(self, condition: str | None = None) -> str:
        c = self.condition(condition)
        return c.model if c is not None and c.model else self.group.stand_in

    def room_body(self, agents: Sequence[tuple[str, str]], condition: str | None = None) -> dict[str, Any]:
        """A room's creation request for one group (of ``condition``): the game's settings, its agents (name,
        model), and the settings that make its games draw from the study's items (the protocol's item source
        says which)."""
        from lexicoord.core.items import source_of

        c = self.condition(condition)
        game = {**self.game, **(c.game if c is not None else {})}
        body: dict[str, Any] = {**game, "protocol": self.protocol, "seed": self.seed,
                                "max_people": self.group.people,
                                "agents": [{"name": n, "model": m} for n, m in agents]}
        source = source_of(self.protocol)
        if source is not None:  # the study's first set, unless the game's own setting picks another
            sets = list(self.items or source.defaults)
            chosen = game.get(source.setting, sets[0] if sets else None)
            if chosen is not None:
                body.update(source.study_settings(str(chosen)))
        return body


def _room_settings(study: StudyFile, condition: str | None = None) -> None:
    """The game's settings (a condition's) checked by the protocol's own room model (a ``ValidationError`` at
    ``game``)."""
    from lexicoord.core.registry import get_protocol

    entry = get_protocol(study.protocol)
    if not entry.room:
        raise ConfigError(f"protocol '{study.protocol}' has no live room, so no study can play it")
    adapter = entry.room_adapter()
    agents = [(a.name, a.model) for a in study.agents(condition)]
    settings = adapter.settings_model.model_validate(study.room_body(agents, condition))
    # The table every group has at its first game (a short one is filled up to it, or sent home).
    settings.check_table([f"Person {i}" for i in range(1, study.group.people + 1)] + [n for n, _ in agents])


def _rooms_checked(source: Source, study: StudyFile) -> list[Problem]:
    """Each group's room as the protocol's room model reads it: the study's own, then each condition's, each
    problem at the line that wrote the value (a condition's own key, else the study's)."""
    problems: list[Problem] = []
    for i, condition in [(None, None), *enumerate(study.conditions)]:
        at: tuple[str | int, ...] = ("conditions", i) if i is not None else ()
        named = f"conditions.{condition.name}." if condition is not None else ""
        try:
            _room_settings(study, condition.name if condition is not None else None)
        except ValidationError as exc:
            for path, text in problems_of(exc):
                own = condition is not None and bool(path) and path[0] in condition.game
                problems.append(Problem(where=source.where((*at, "game", *path) if own else ("game", *path)),
                                        text=f"{named}game.{text}"))
        except ConfigError as exc:
            if condition is None:
                section = "group" if _has_room(study.protocol) else "protocol"  # a table too small, or no room
                problems.append(Problem(where=source.where((section,)), text=f"{section}: {str(exc).rstrip('.')}."))
                if section == "protocol":
                    break  # no room at all: every condition would say so again
            else:
                where = (*at, "agents") if condition.agents is not None else at
                problems.append(Problem(where=source.where(where), text=f"{named}agents: {str(exc).rstrip('.')}."))
    return problems


def _bonus_field(study: StudyFile) -> None:
    """A bonus per game reads a yes-or-no field of the protocol's stored outcome: a misspelt one would pay
    everyone nothing, silently."""
    from typing import get_args

    from lexicoord.core.registry import get_protocol

    if study.bonus.per_game <= 0:
        return
    fields = get_protocol(study.protocol).rules().outcome_model.model_fields
    yes_no = sorted(n for n, f in fields.items() if f.annotation is bool or bool in get_args(f.annotation))
    if study.bonus.when not in yes_no:
        told = f"one of {', '.join(yes_no)}" if yes_no else "not available: its outcome has no yes-or-no field"
        raise ConfigError(f"bonus.when: '{study.bonus.when}' is not a yes-or-no field of a {study.protocol} game's "
                          f"outcome; a bonus per game is {told}")


def _has_room(protocol: str) -> bool:
    from lexicoord.core.registry import get_protocol

    try:
        return bool(get_protocol(protocol).room)
    except ConfigError:
        return False


def load(path: Path, overrides: Sequence[str] = (), environ: Mapping[str, str] | None = None) -> StudyFile:
    """The study of ``path`` with ``overrides`` (``--set key=value``) applied, checked whole: every problem is
    one sentence at its line (:class:`~lexicoord.experiments.source.ExperimentError`)."""
    return checked(read(path, environ, what="study file"), overrides)


def checked(source: Source, overrides: Sequence[str] = ()) -> StudyFile:
    apply_overrides(source, overrides)
    problems: list[Problem] = list(source.problems)
    study: StudyFile | None = None
    try:
        study = StudyFile.model_validate(source.data, context={"base": source.base})
    except ValidationError as exc:
        problems += [Problem(where=source.where(p), text=t) for p, t in problems_of(exc)
                     if not any(p[:len(u)] == u for u in source.unset)]
    if study is not None:
        room_problems = _rooms_checked(source, study)
        problems += room_problems
        if not room_problems:
            try:
                _bonus_field(study)
            except ConfigError as exc:
                problems.append(Problem(where=source.where(("bonus", "when")), text=f"{str(exc).rstrip('.')}."))
    if problems or study is None:
        raise ExperimentError(list({str(p): p for p in problems}.values()))
    return study


class StudyPages(BaseModel):
    """The study's texts as the participant's page shows them (no answer of the quiz, no attention check's)."""

    title: str
    consent: str
    instructions: str
    quiz: list[dict[str, Any]]
    attempts: int
    survey: list[dict[str, Any]]


def pages_of(study: StudyFile) -> StudyPages:
    return StudyPages(
        title=study.title, consent=study.consent.markdown(), instructions=study.instructions.markdown(),
        quiz=[{"id": q.id, "text": q.text, "options": q.options} for q in study.quiz.questions],
        attempts=study.quiz.attempts,
        survey=[q.model_dump(include={"id", "kind", "text", "options", "scale", "labels", "required", "max_length"})
                for q in study.survey.questions])
