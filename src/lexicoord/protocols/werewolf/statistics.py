"""Werewolf's numbers (COGENT paper, Tables 2, 6 and 7, and the game itself), from stored events alone.

Definitions (the paper names most of these without defining them; ours, repeated in the README). A
*reuse* is a detected use of a known term in a later turn (the coining turn itself is not counted); a
term's *pool* is the audience it was shared to (public, or the wolves). A term is its pool and string (one
of each pool may share a string: they are two terms, and each use counts for the one its speaker saw). ``tok()`` counts text with one
tokenizer for every text (default: whitespace words; ``--tokenizer local/NAME``: a GGUF vocabulary).

- accepted terms N_term, observed reuses N_reuse, uptake = N_reuse / N_term;
- final lexicon snapshot tokens: tok of every accepted entry written ``term = definition``;
- lexicon footprint ratio: those tokens / tok of the game's public speech (the public-log footprint);
- reuse per 100 lexicon tokens = 100 x N_reuse / final lexicon tokens;
- public (wolf-private) terms and their reuses; public reuse share = public reuses / all reuses; public
  uptake advantage = (public reuses / public terms) / (wolf reuses / wolf terms);
- terms used in public speech: terms with at least one reuse in a public turn; terms used by >= 2 public
  speakers (the coiner's later public uses count as one speaker); average unique public speakers per term
  (over all accepted terms, unused ones counting 0);
- public checkpoint persistence: a checkpoint is the end of a day; for every public term and every later
  day the game reached, whether the term was used in that day's public speech; persistence = used pairs /
  all pairs.
- Matched checkpoints (Table 6): for an ORIGIN and a COGENT game of the same seed, the days both completed;
  at the last of them, the public log (tok of public speech so far) and the personal logs (for every
  player, tok of the speech that player could see so far, summed), and the full game's tokens (prompt and
  completion of every call). Reduction = 1 - COGENT / ORIGIN.
- Pseudo-lexicon (for ORIGIN, and COGENT alike, so uptake compares fairly): word bigrams and trigrams of
  public speech, case-folded, without player names and not made only of stop words, said at least 3 times
  (a bigram only inside a counted trigram is not counted again); reported as their number and how many
  were said by at least two speakers (their "uptake").
- Days count as checkpoints only when complete: a game the wolves won at dawn of day d has d - 1.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from statistics import mean

from pydantic import BaseModel, Field

from lexicoord.analysis.compare import Outcome
from lexicoord.analysis.intervals import Interval, mean_ci, total_ci
from lexicoord.analysis.reading import keeping_failed
from lexicoord.analysis.term_functions import TermLabel
from lexicoord.core.audience import Viewer, can_see
from lexicoord.core.events import Event
from lexicoord.lexicon.board import normal
from lexicoord.lexicon.events import TermCandidateEvent, TermsSharedEvent, TermUsedEvent
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.tokenizer import named_tokenizer
from lexicoord.protocols.werewolf import WerewolfGame
from lexicoord.protocols.werewolf.events import ActionEvent, CheckResultEvent, NightEvent, RoleEvent, SpeechEvent
from lexicoord.runs.records import EpisodeRecord

Tok = Callable[[str, "int | None"], "int | None"]
STOP = frozenset("a an the and or but if of to in on at for with by is are was were be been am i you he she it we "
                 "they me him her us them my your his its our their this that these those not no so as do does did "
                 "have has had will would can could should just very what who why how when where which there here "
                 "think know say said vote votes player players".split())


#: The default tok(): whitespace words (speech has no backend count of its own).
words: Tok = named_tokenizer("words")


class TermStats(BaseModel):
    term: str
    definition: str = ""
    pool: str
    coiner: str
    day: int | None
    reuses: int = 0
    public_reuses: int = 0
    public_speakers: list[str] = Field(default_factory=list)
    days_used: list[int] = Field(default_factory=list)


class RoleEffects(BaseModel):
    """What the roles did: saves that kept a victim alive, guarded attacks, checks and poisons (on wolves),
    and the votes of players who were not wolves (on wolves)."""

    saves: int
    guarded_attacks: int
    checks: int
    checks_on_wolves: int
    poisons: int
    poisons_on_wolves: int
    village_votes: int
    village_votes_on_wolves: int


class Game(RoleEffects):
    """One finished game, flattened."""

    episode_id: int | None
    seed: int | None
    condition: str
    winner: str
    days: int
    roles: dict[str, str]
    calls: int
    prompt_tokens: int
    completion_tokens: int
    calls_by_phase: dict[str, int]
    tokens_by_phase: dict[str, int]
    invalid_actions: int
    public_tokens: int
    personal_tokens: int
    #: Days whose discussion and vote took place (a game won at dawn did not complete its last day).
    complete_days: int = 0
    #: Day -> (public tokens, personal tokens) at the end of that day.
    checkpoints: dict[int, tuple[int, int]] = Field(default_factory=dict)
    terms: list[TermStats] = Field(default_factory=list)
    rejected: dict[str, int] = Field(default_factory=dict)
    lexicon_tokens: int = 0
    pseudo_terms: int = 0
    pseudo_shared: int = 0


def _public_speech(events: list[Event]) -> list[SpeechEvent]:
    return [e for e in events if isinstance(e, SpeechEvent) and e.audience.public and not e.failure]


def pseudo_lexicon(speeches: list[SpeechEvent], names: list[str]) -> tuple[int, int]:
    """Recurring public phrases, found after the game: word bigrams and trigrams (case-folded, no player
    names, not only stop words) said at least 3 times, a bigram not counted where it only occurs inside a
    counted trigram. Returns (how many, how many were taken up: said by a second speaker after the first)."""
    banned = {w for n in names for w in re.findall(r"\w+", n.lower())}
    uses: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for s in speeches:
        tokens = re.findall(r"[a-z][a-z'-]*", s.text.lower())
        for n in (2, 3):
            for i in range(len(tokens) - n + 1):
                gram = tuple(tokens[i:i + n])
                if all(w in STOP for w in gram) or any(w in banned for w in gram):
                    continue
                uses[gram].append(s.agent or "?")
    recurring = {g for g, who in uses.items() if len(who) >= 3}
    within: Counter[tuple[str, ...]] = Counter()
    for t in (g for g in recurring if len(g) == 3):
        within[t[:2]] += len(uses[t])
        within[t[1:]] += len(uses[t])
    found = [g for g in recurring if len(g) == 3 or len(uses[g]) > within[g]]
    return len(found), sum(1 for g in found if len(set(uses[g])) >= 2)


def entries(events: list[Event]) -> dict[tuple[str, str], TermStats]:
    """Every accepted term of a game, keyed by its string and its coiner, with the pool of the share that
    follows its coining (``private`` if none did).

    The string alone is not a key: the wolves may coin a term in their channel and a villager, who cannot
    see it, the same string in public, and these are two terms with two coiners and two pools. The coiner
    is: the board refuses a term its coiner can already see, so one player never holds two of one string.
    A use names the coiner of the entry its speaker could see, so it counts for that entry alone."""
    found: dict[tuple[str, str], TermStats] = {}
    waiting: list[TermStats] = []
    for e in events:
        if isinstance(e, TermCandidateEvent) and e.accepted:
            stat = TermStats(term=e.term, definition=e.definition, pool="private", coiner=e.agent or "?", day=e.round)
            if (normal(e.term), stat.coiner) not in found:
                found[normal(e.term), stat.coiner] = stat
                waiting.append(stat)
        elif isinstance(e, TermsSharedEvent):
            shared = {normal(t) for t in e.terms}
            for stat in [s for s in waiting if normal(s.term) in shared]:
                stat.pool = "public" if e.audience.public else "wolves"
                waiting.remove(stat)
    return found


def game_from(record: EpisodeRecord, events: list[Event], tok: Tok = words) -> Game | None:
    if record.status != "done" or not record.outcome:
        return None
    o = WerewolfGame.outcome_of(record)
    roles = {e.agent or "?": e.role for e in events if isinstance(e, RoleEvent)} or o.roles
    wolves = {p for p, r in roles.items() if r == "werewolf"}
    viewers = {p: Viewer(name=p, groups=frozenset({"wolves"} if p in wolves else set())) for p in roles}
    calls = [e for e in events if isinstance(e, ModelCallEvent)]
    by_phase_calls: Counter[str] = Counter(c.phase or "?" for c in calls)
    by_phase_tokens: Counter[str] = Counter()
    for c in calls:
        by_phase_tokens[c.phase or "?"] += c.usage.total_tokens
    nights = [e for e in events if isinstance(e, NightEvent)]
    actions = [e for e in events if isinstance(e, ActionEvent)]
    checks = [e for e in events if isinstance(e, CheckResultEvent)]
    poisons = [e for e in actions if e.action == "poison" and e.target]
    votes = [e for e in actions if e.action == "vote" and e.target and e.agent not in wolves]

    def size(text: str) -> int:
        return tok(text, None) or 0

    speech = [e for e in events if isinstance(e, SpeechEvent) and not e.failure]
    complete = max((e.round or 0 for e in events if isinstance(e, ActionEvent) and e.action == "vote"), default=0)
    checkpoints: dict[int, tuple[int, int]] = {0: (0, 0)}
    public = personal = 0
    for day in range(1, o.days + 1):
        today = [s for s in speech if s.round == day]
        public += sum(size(s.text) for s in today if s.audience.public)
        personal += sum(size(s.text) for s in today for v in viewers.values() if can_see(v, s.audience))
        checkpoints[day] = (public, personal)
    terms = entries(events)
    lexicon = sum(size(f"{t.term} = {t.definition}") for t in terms.values())
    for u in events:
        if isinstance(u, TermUsedEvent) and (normal(u.term), u.coiner) in terms:
            stat = terms[normal(u.term), u.coiner]
            stat.reuses += u.count
            if u.public:
                stat.public_reuses += u.count
                if u.agent not in stat.public_speakers:
                    stat.public_speakers.append(u.agent or "?")
                if u.round is not None and u.round not in stat.days_used:
                    stat.days_used.append(u.round)
    pseudo, shared = pseudo_lexicon(_public_speech(events), list(roles))
    return Game(
        episode_id=record.id, seed=record.spec.get("item", {}).get("seed"), condition=o.condition, winner=o.winner,
        days=o.days, roles=roles, calls=len(calls), prompt_tokens=sum(c.usage.prompt_tokens or 0 for c in calls),
        completion_tokens=sum(c.usage.completion_tokens or 0 for c in calls), calls_by_phase=dict(by_phase_calls),
        tokens_by_phase=dict(by_phase_tokens), invalid_actions=o.invalid_actions,
        saves=sum(n.saved and n.attacked not in n.deaths for n in nights),
        guarded_attacks=sum(n.attacked is not None and n.protected == n.attacked for n in nights),
        checks=len(checks), checks_on_wolves=sum(c.wolf for c in checks), poisons=len(poisons),
        poisons_on_wolves=sum(roles.get(p.target or "") == "werewolf" for p in poisons),
        village_votes=len(votes), village_votes_on_wolves=sum(v.target in wolves for v in votes),
        public_tokens=public, personal_tokens=personal, complete_days=complete, checkpoints=checkpoints, terms=list(terms.values()),
        rejected=dict(Counter(c.reason or "?" for c in events if isinstance(c, TermCandidateEvent) and not c.accepted)),
        lexicon_tokens=lexicon, pseudo_terms=pseudo, pseudo_shared=shared,
    )


def games_from(rows: Iterable[tuple[EpisodeRecord, list[Event]]], tok: Tok = words) -> list[Game]:
    return [g for r, events in rows if (g := game_from(r, events, tok)) is not None]


class Lexical(BaseModel):
    """Table 7 over a set of COGENT games."""

    games: int
    accepted_terms: int
    reuses: int
    uptake: float | None
    lexicon_tokens: int
    footprint_ratio: float | None
    reuse_per_100_lexicon_tokens: float | None
    public_terms: int
    public_reuses: int
    wolf_terms: int
    wolf_reuses: int
    public_reuse_share: float | None
    public_uptake_advantage: float | None
    terms_used_in_public: int
    terms_with_two_public_speakers: int
    mean_public_speakers_per_term: float | None
    public_checkpoint_persistence: float | None
    rejected: dict[str, int]
    #: Persistence as counted: (public term, later completed day) pairs, and those on which the term was used in public.
    persistence_pairs: int = 0
    persistence_used: int = 0
    #: 95% intervals of the counts above (totals over the games, by resampling games) and of the mean speakers per
    #: term (over terms), by field name (:data:`lexicoord.analysis.intervals.METHOD`).
    intervals: dict[str, Interval] = Field(default_factory=dict)


#: Lexical's counts that are totals over games, each from one game's terms.
GAME_COUNTS: dict[str, Callable[[Game], float]] = {
    "accepted_terms": lambda g: len(g.terms),
    "reuses": lambda g: sum(t.reuses for t in g.terms),
    "lexicon_tokens": lambda g: g.lexicon_tokens,
    "public_terms": lambda g: sum(t.pool == "public" for t in g.terms),
    "public_reuses": lambda g: sum(t.reuses for t in g.terms if t.pool == "public"),
    "wolf_terms": lambda g: sum(t.pool == "wolves" for t in g.terms),
    "wolf_reuses": lambda g: sum(t.reuses for t in g.terms if t.pool == "wolves"),
    "terms_used_in_public": lambda g: sum(t.public_reuses > 0 for t in g.terms),
    "terms_with_two_public_speakers": lambda g: sum(len(t.public_speakers) >= 2 for t in g.terms),
}


def _div(a: float, b: float) -> float | None:
    return a / b if b else None


def lexical(games: list[Game]) -> Lexical:
    terms = [t for g in games for t in g.terms]
    public = [t for t in terms if t.pool == "public"]
    wolf = [t for t in terms if t.pool == "wolves"]
    reuses = sum(t.reuses for t in terms)
    lex = sum(g.lexicon_tokens for g in games)
    pairs = used = 0
    for g in games:
        for t in g.terms:
            if t.pool == "public" and t.day is not None:
                later = range(t.day + 1, g.complete_days + 1)
                pairs += len(later)
                used += sum(d in t.days_used for d in later)
    rejected: Counter[str] = Counter()
    for g in games:
        rejected.update(g.rejected)
    pub_r, wolf_r = sum(t.reuses for t in public), sum(t.reuses for t in wolf)
    per_public, per_wolf = _div(pub_r, len(public)), _div(wolf_r, len(wolf))
    return Lexical(
        games=len(games), accepted_terms=len(terms), reuses=reuses, uptake=_div(reuses, len(terms)),
        lexicon_tokens=lex, footprint_ratio=_div(lex, sum(g.public_tokens for g in games)),
        reuse_per_100_lexicon_tokens=_div(100 * reuses, lex), public_terms=len(public), public_reuses=pub_r,
        wolf_terms=len(wolf), wolf_reuses=wolf_r, public_reuse_share=_div(pub_r, reuses),
        public_uptake_advantage=_div(per_public, per_wolf) if per_public is not None and per_wolf else None,
        terms_used_in_public=sum(t.public_reuses > 0 for t in terms),
        terms_with_two_public_speakers=sum(len(t.public_speakers) >= 2 for t in terms),
        mean_public_speakers_per_term=mean(len(t.public_speakers) for t in terms) if terms else None,
        public_checkpoint_persistence=_div(used, pairs), rejected=dict(rejected.most_common()),
        persistence_pairs=pairs, persistence_used=used,
        intervals={k: ci for k, ci in (*((name, total_ci([count(g) for g in games])) for name, count in GAME_COUNTS.items()),
                                       ("mean_public_speakers_per_term", mean_ci([len(t.public_speakers) for t in terms])))
                   if ci is not None},
    )


class Sizes(BaseModel):
    """Table 6's numbers: logs, tokens and pseudo-terms of the ORIGIN and the COGENT side."""

    origin_public: int
    cogent_public: int
    origin_personal: int
    cogent_personal: int
    origin_total_tokens: int
    cogent_total_tokens: int
    origin_pseudo_terms: int
    origin_pseudo_shared: int
    cogent_pseudo_terms: int
    cogent_pseudo_shared: int


class Matched(Sizes):
    """Table 6 for one ORIGIN/COGENT pair of games (same seed)."""

    seed: int | None
    checkpoint_day: int


class MatchedTotal(Sizes):
    """Table 6 over every pair: the paper's figures are totals over its games, and its changes are taken
    on the totals (not averaged over pairs)."""

    pairs: int
    #: Each total's 95% interval, by resampling the pairs (:data:`lexicoord.analysis.intervals.METHOD`).
    intervals: dict[str, Interval] = Field(default_factory=dict)


def matched_total(pairs: list[Matched]) -> MatchedTotal | None:
    if not pairs:
        return None
    intervals = {f: ci for f in Sizes.model_fields if (ci := total_ci([getattr(m, f) for m in pairs])) is not None}
    return MatchedTotal(pairs=len(pairs), intervals=intervals,
                        **{f: sum(getattr(m, f) for m in pairs) for f in Sizes.model_fields})


def matched(games: list[Game]) -> list[Matched]:
    by_seed: dict[int | None, dict[str, Game]] = defaultdict(dict)
    for g in games:
        by_seed[g.seed][g.condition] = g
    out = []
    for seed, pair in sorted(by_seed.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
        o, c = pair.get("origin"), pair.get("cogent")
        if not o or not c:
            continue
        day = min(o.complete_days, c.complete_days)
        out.append(Matched(
            seed=seed, checkpoint_day=day, origin_public=o.checkpoints[day][0], cogent_public=c.checkpoints[day][0],
            origin_personal=o.checkpoints[day][1], cogent_personal=c.checkpoints[day][1],
            origin_total_tokens=o.prompt_tokens + o.completion_tokens,
            cogent_total_tokens=c.prompt_tokens + c.completion_tokens, origin_pseudo_terms=o.pseudo_terms,
            origin_pseudo_shared=o.pseudo_shared, cogent_pseudo_terms=c.pseudo_terms, cogent_pseudo_shared=c.pseudo_shared,
        ))
    return out


class Results(RoleEffects):
    """The games themselves, per condition."""

    condition: str
    games: int
    wins: dict[str, int]
    mean_days: float
    invalid_actions: int
    mean_calls: float
    mean_tokens: float
    #: 95% intervals of the means over games (``mean_days``, ``mean_calls``, ``mean_tokens``).
    intervals: dict[str, Interval] = Field(default_factory=dict)
    calls_by_phase: dict[str, float]
    tokens_by_phase: dict[str, float]


def results(games: list[Game]) -> list[Results]:
    out = []
    for condition in sorted({g.condition for g in games}):
        gs = [g for g in games if g.condition == condition]
        phases: Counter[str] = Counter()
        phase_calls: Counter[str] = Counter()
        for g in gs:
            phases.update(g.tokens_by_phase)
            phase_calls.update(g.calls_by_phase)
        out.append(Results(
            condition=condition, games=len(gs), wins=dict(Counter(g.winner for g in gs)),
            mean_days=mean(g.days for g in gs), saves=sum(g.saves for g in gs),
            guarded_attacks=sum(g.guarded_attacks for g in gs), checks=sum(g.checks for g in gs),
            checks_on_wolves=sum(g.checks_on_wolves for g in gs), poisons=sum(g.poisons for g in gs),
            poisons_on_wolves=sum(g.poisons_on_wolves for g in gs), village_votes=sum(g.village_votes for g in gs),
            village_votes_on_wolves=sum(g.village_votes_on_wolves for g in gs),
            invalid_actions=sum(g.invalid_actions for g in gs), mean_calls=mean(g.calls for g in gs),
            mean_tokens=mean(g.prompt_tokens + g.completion_tokens for g in gs),
            intervals={k: ci for k, values in (("mean_days", [g.days for g in gs]), ("mean_calls", [g.calls for g in gs]),
                                               ("mean_tokens", [g.prompt_tokens + g.completion_tokens for g in gs]))
                       if (ci := mean_ci(values)) is not None},
            calls_by_phase={k: v / len(gs) for k, v in sorted(phase_calls.items())},
            tokens_by_phase={k: v / len(gs) for k, v in sorted(phases.items())},
        ))
    return out


class WerewolfStats(BaseModel):
    games: int
    failed: int
    tokenizer: str
    results: list[Results]
    lexical: Lexical | None
    matched: list[Matched]
    matched_total: MatchedTotal | None = None


def compute(games: list[Game], failed: int = 0, tokenizer: str = "words") -> WerewolfStats:
    cogent = [g for g in games if g.condition == "cogent"]
    pairs = matched(games)
    return WerewolfStats(games=len(games), failed=failed, tokenizer=tokenizer, results=results(games),
                         lexical=lexical(cogent) if cogent else None, matched=pairs, matched_total=matched_total(pairs))


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]], tok: Tok = words,
               tokenizer: str = "words") -> WerewolfStats:
    """A run's Werewolf statistics (registered as the protocol's ``statistics``)."""
    stream, failed = keeping_failed(rows)
    games = games_from(stream, tok)
    return compute(games, len(failed), tokenizer)


def term_labels(games: Iterable[Game]) -> list[TermLabel]:
    """One row per accepted term for the lexical-function file; ``model`` holds the term's pool, so the
    functions compare between the public and the wolves' pool."""
    return [TermLabel(task="werewolf", model=t.pool, variant=g.condition, episode=g.episode_id, item=str(g.seed),
                      coiner=t.coiner, term=t.term, definition=t.definition) for g in games for t in g.terms]


#: What an annotator is told the agents were doing.
CONTEXT = ("A game of Werewolf among 8 players with hidden roles (werewolves, a seer, a witch, a guard, villagers); "
           "players coined the term in their discussion, in public or in the wolves' private channel.")


def outcomes(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> list[Outcome]:
    """Each game for ``lexicoord compare``: its deal within its condition, the days it lasted and its public
    log's size in tokens (a game has no right answer)."""
    return [Outcome(item=str(g.seed), cell={"condition": g.condition}, rounds=g.days, tokens=g.public_tokens)
            for g in games_from(rows)]
