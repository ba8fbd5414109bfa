"""COGENT's numbers (Table 1, Table 4, and what the paper's Limitations ask for), from stored events alone.

Definitions (COGENT paper, Appendix B, with our choices where it is silent; the README repeats them):

- **Acc**: correct final answers / finished episodes of the cell. FINALIZE's answer is compared with the
  gold answer by the task's equality; no valid prediction is wrong, never right, and is counted apart, in
  every variant (``invalid``: episodes where no agent's latest reply held one, SINGLE's one answer
  included; ``invalid predictions``: agents' latest replies without one, over n x agents). A cell at or over
  :data:`INVALID_WARNING` invalid is warned about. Episodes that failed outright (an unreachable model) are in
  no denominator and are reported as ``failed``. The 95% interval is Wilson's.
- **Cut**: replies the backend stopped at the token limit, among the outputs Tok reads (over those outputs)
  and among all the cell's replies (over all of them); a Tok over cut replies measures the limit, not the
  model, so a cell at or over :data:`CUT_WARNING` of either is warned about.
- **B** (VANILLA and COGENT): the sum over A and B of tok(round-0 output). **F** (VANILLA): the sum of tok of
  each agent's last debate output. **W** (COGENT): the sum of tok of each agent's last coining pass in the last
  coining-active meta-round (its last output "before the debate marker"). **CR** = F/B (VANILLA) or W/B
  (COGENT) per item; the table shows the mean over items whose B is not zero. No coining round: no W, no CR.
- **Tok**: SINGLE, tok(the answer); VANILLA and COGENT, the mean tok of the two outputs of the final
  meta-round (after warm-up when R > R_c). Per output, so it reads on the scale of SINGLE's one answer; the
  round's sum is twice that.
- **tok()**: by default the completion tokens the backend reported for that output; with a named tokenizer
  (a GGUF's vocabulary, loaded without weights) every output is counted by it, whatever produced it. An
  output with no count (a person's) leaves its item out of that mean, and the number left out is reported.
- **Cost per item** (not in the paper's table, which is not total API usage): every model call of the
  episode, retries included: calls, prompt tokens, completion tokens.
- **Paired test**: exact McNemar (two-sided binomial on the discordant items) between two variants on the
  same items, task and model.
- **Lexical ecology** (Table 4): accepted entries, unique terms (case-folded), rejections by reason, uses
  (every detected occurrence of a known term in a later turn, public use turns and private coining
  passes), cross-agent uses (the user is not the coiner), terms taken up
  by the other agent, and the paper's Uptake = uses / accepted entries.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from statistics import mean
from typing import Any

from pydantic import BaseModel, Field

from lexicoord.analysis.compare import Outcome
from lexicoord.analysis.intervals import Interval, exact_mcnemar, mean_ci, wilson
from lexicoord.analysis.reading import keeping_failed
from lexicoord.analysis.term_functions import TermLabel
from lexicoord.core.events import Event
from lexicoord.lexicon.events import TermCandidateEvent, TermsSharedEvent, TermUsedEvent
from lexicoord.models.observe import ModelCallEvent
from lexicoord.protocols.cogent import CogentStudy, ResponseEvent
from lexicoord.runs.records import EpisodeRecord
from lexicoord.tasks.benchmarks import BENCHMARKS

#: tok(): an output's text and the count its backend reported, to a count (``None``: unknown).
Tokenizer = Callable[[str, "int | None"], "int | None"]
#: Pairs tested with exact McNemar, (first, second), when a run has both.
PAIRS = (("cogent", "vanilla"), ("cogent", "vanilla_matched"), ("cogent", "cogent_private"),
         ("cogent", "cogent_free"), ("cogent", "cogent_log"), ("vanilla", "single"))
VARIANT_ORDER = ("single", "vanilla", "vanilla_matched", "cogent", "cogent_private", "cogent_free", "cogent_log")
#: Share of a cell's answers that are invalid, or of its replies cut at the token limit, from which a run and its
#: report warn (a cell that far gone measures the answer format or the limit more than the variant).
INVALID_WARNING = 0.5
CUT_WARNING = 0.2


def reported(text: str, count: int | None) -> int | None:
    """The default tok(): what the backend billed for the output."""
    return count


class Entry(BaseModel):
    term: str
    definition: str
    coiner: str
    round: int | None
    coin_pass: int | None


class Use(BaseModel):
    agent: str
    term: str
    coiner: str
    round: int | None
    count: int


class CogentEpisode(BaseModel):
    """One finished episode, flattened for tables and files."""

    episode_id: int | None
    item_id: str
    task: str
    variant: str
    model: str
    gold: str
    answer: str | None
    correct: bool
    rule: str
    predictions: dict[str, str | None]
    B: int | None = None
    F: int | None = None
    W: int | None = None
    cr: float | None = None
    tok: float | None = None
    #: Tok's outputs (SINGLE's answer, the final round's two) and how many of them were cut at the token limit.
    tok_outputs: int = 0
    tok_cut: int = 0
    #: Every reply of the episode, and how many were cut at the token limit.
    replies: int = 0
    cut: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_time: float = 0.0
    entries: list[Entry] = Field(default_factory=list)
    rejected: dict[str, int] = Field(default_factory=dict)
    uses: list[Use] = Field(default_factory=list)
    question: str = ""
    #: The episode as it went, for transcripts: every reply, candidate, share (with the board) and use, in order.
    moves: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def invalid(self) -> bool:
        """No agent's latest reply held a valid prediction (in every variant; two valid, different ones are a tie)."""
        return self.answer is None and self.rule != "tie"


def model_label(lineup: list[dict[str, Any]]) -> str:
    models = list(dict.fromkeys(str(s.get("model") or s.get("kind") or "?") for s in lineup))
    return " + ".join(models)


def _sum(values: list[int | None]) -> int | None:
    return None if not values or any(v is None for v in values) else sum(v for v in values if v is not None)


def lengths(replies: list[ResponseEvent], variant: str, tok: Tokenizer) -> dict[str, Any]:
    """B, F, W, CR and Tok of one episode (see the module's definitions)."""
    count = {id(e): tok(e.text, e.tokens) for e in replies}
    cut = {"replies": len(replies), "cut": sum(e.truncated for e in replies)}
    if variant == "single":
        last = replies[-1:]
        return {"tok": count[id(last[0])] if last else None, "tok_outputs": len(last),
                "tok_cut": sum(e.truncated for e in last), **cut}
    agents = list(dict.fromkeys(e.agent for e in replies if e.stage == "init"))
    init = [count[id(e)] for e in replies if e.stage == "init"]
    debate = [e for e in replies if e.stage in ("debate", "use")]
    last_round = max((e.round or 0 for e in debate), default=None)
    outputs = [e for e in debate if e.round == last_round]
    final = [count[id(e)] for e in outputs]
    out: dict[str, Any] = {"B": _sum(init), "tok_outputs": len(outputs), "tok_cut": sum(e.truncated for e in outputs),
                           **cut}
    out["F"] = _sum([next((count[id(e)] for e in reversed(debate) if e.agent == a), None) for a in agents])
    if variant.startswith("cogent"):
        coins = [e for e in replies if e.stage == "coin"]
        last_coin = max((e.round or 0 for e in coins), default=None)
        lasts = [next((count[id(e)] for e in reversed(coins) if e.agent == a and e.round == last_coin), None)
                 for a in agents]
        out["W"] = _sum(lasts) if coins else None
        top = out["W"]
    else:
        top = out["F"]
    out["cr"] = top / out["B"] if top is not None and out["B"] else None
    known = [v for v in final if v is not None]
    out["tok"] = mean(known) if known and len(known) == len(final) else None
    return out


def episode_from(record: EpisodeRecord, events: list[Event], tok: Tokenizer = reported) -> CogentEpisode | None:
    if record.status != "done" or not record.outcome:
        return None
    o = CogentStudy.outcome_of(record)
    replies = [e for e in events if isinstance(e, ResponseEvent)]
    calls = [e for e in events if isinstance(e, ModelCallEvent)]
    candidates = [e for e in events if isinstance(e, TermCandidateEvent)]
    item = record.spec.get("item", {})
    return CogentEpisode(
        episode_id=record.id, item_id=record.item_id, task=o.task, variant=o.variant,
        model=model_label(record.spec.get("lineup", [])), gold=str(item.get("answer", "")), answer=o.answer,
        correct=o.correct, rule=o.rule, predictions=o.predictions, **lengths(replies, o.variant, tok),
        calls=len(calls), prompt_tokens=sum(c.usage.prompt_tokens or 0 for c in calls),
        completion_tokens=sum(c.usage.completion_tokens or 0 for c in calls),
        wall_time=max(0.0, (record.finished_at or 0) - (record.started_at or 0)),
        entries=[Entry(term=c.term, definition=c.definition, coiner=c.agent or "?", round=c.round,
                       coin_pass=c.coin_pass) for c in candidates if c.accepted],
        rejected=dict(Counter(c.reason or "?" for c in candidates if not c.accepted)),
        uses=[Use(agent=u.agent or "?", term=u.term, coiner=u.coiner, round=u.round, count=u.count)
              for u in events if isinstance(u, TermUsedEvent)],
        question=BENCHMARKS[o.task].render(item) if o.task in BENCHMARKS else "",
        moves=[_move(e) for e in events if isinstance(e, MOVES)],
    )


MOVES = (ResponseEvent, TermCandidateEvent, TermsSharedEvent, TermUsedEvent)


def _move(e: Event) -> dict[str, Any]:
    keep = {"type", "round", "agent", "stage", "coin_pass", "text", "prediction", "tokens", "failure", "term",
            "definition", "accepted", "reason", "terms", "snapshot", "coiner", "count", "public"}
    return {k: v for k, v in e.model_dump(mode="json", include=keep).items() if v is not None}


def episodes_from(rows: Iterable[tuple[EpisodeRecord, list[Event]]], tok: Tokenizer = reported) -> list[CogentEpisode]:
    return [e for r, events in rows if (e := episode_from(r, events, tok)) is not None]


class Cell(BaseModel):
    """Table 1's cell for one model x variant x task, with what the paper does not report beside it."""

    model: str
    variant: str
    task: str
    n: int
    correct: int
    acc: float
    acc_ci: Interval | None
    #: Finished episodes where no agent's latest reply held a valid prediction (wrong, and counted here), over ``n``.
    invalid: int
    #: Agents' latest replies with no valid prediction, over ``n`` x agents (SINGLE: 1, debates: 2).
    invalid_predictions: int = 0
    predictions: int = 0
    #: Two valid, different final predictions settled by the tie rule, over ``n``.
    ties: int
    failed: int = 0
    cr: float | None = None
    #: Items whose CR could be computed (B known and not zero, and F or W known).
    cr_n: int = 0
    #: The mean CR's and the mean Tok's 95% intervals over items (:data:`lexicoord.analysis.intervals.METHOD`).
    cr_ci: Interval | None = None
    tok: float | None = None
    tok_n: int = 0
    tok_ci: Interval | None = None
    #: Tok's outputs cut at the token limit, over ``tok_outputs``; all replies cut, over ``replies``.
    tok_cut: int = 0
    tok_outputs: int = 0
    cut: int = 0
    replies: int = 0
    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0


class Paired(BaseModel):
    """Exact McNemar between two variants over the items both finished (same task and model)."""

    model: str
    task: str
    first: str
    second: str
    n: int
    first_only: int
    second_only: int
    both: int
    neither: int
    p_value: float


class Ecology(BaseModel):
    """Table 4's lexical ecology for one task x model x variant."""

    model: str
    task: str
    variant: str
    episodes: int
    entries: int
    unique_terms: int
    candidates: int
    rejected: dict[str, int]
    uses: int
    cross_uses: int
    #: Accepted entries that the other agent used at least once.
    taken_up: int
    #: The paper's Uptake = uses / accepted entries.
    uptake: float | None


class CogentStats(BaseModel):
    episodes: int
    failed: int
    tokenizer: str
    cells: list[Cell]
    paired: list[Paired]
    ecology: list[Ecology]


def _order(cell: tuple[str, str, str]) -> tuple[str, int, str]:
    model, variant, task = cell
    return (model, VARIANT_ORDER.index(variant) if variant in VARIANT_ORDER else 99, task)


def cells(episodes: list[CogentEpisode], failed: Counter[tuple[str, str, str]] | None = None) -> list[Cell]:
    groups: dict[tuple[str, str, str], list[CogentEpisode]] = defaultdict(list)
    for e in episodes:
        groups[(e.model, e.variant, e.task)].append(e)
    out = []
    for key in sorted(set(groups) | set(failed or {}), key=_order):
        eps = groups.get(key, [])
        n, right = len(eps), sum(e.correct for e in eps)
        crs = [e.cr for e in eps if e.cr is not None]
        toks = [e.tok for e in eps if e.tok is not None]
        out.append(Cell(
            model=key[0], variant=key[1], task=key[2], n=n, correct=right, acc=right / n if n else 0.0,
            acc_ci=wilson(right, n), invalid=sum(e.invalid for e in eps), ties=sum(e.rule == "tie" for e in eps),
            invalid_predictions=sum(v is None for e in eps for v in e.predictions.values()),
            predictions=sum(len(e.predictions) for e in eps),
            failed=(failed or Counter())[key], cr=mean(crs) if crs else None, cr_n=len(crs), cr_ci=mean_ci(crs),
            tok=mean(toks) if toks else None, tok_n=len(toks), tok_ci=mean_ci(toks),
            tok_cut=sum(e.tok_cut for e in eps), tok_outputs=sum(e.tok_outputs for e in eps),
            cut=sum(e.cut for e in eps), replies=sum(e.replies for e in eps),
            calls=mean(e.calls for e in eps) if eps else 0.0,
            prompt_tokens=mean(e.prompt_tokens for e in eps) if eps else 0.0,
            completion_tokens=mean(e.completion_tokens for e in eps) if eps else 0.0,
        ))
    return out


def paired(episodes: list[CogentEpisode]) -> list[Paired]:
    by: dict[tuple[str, str, str], dict[str, bool]] = defaultdict(dict)
    for e in episodes:
        by[(e.model, e.task, e.variant)][e.item_id] = e.correct
    out = []
    for model, task in sorted({(m, t) for m, t, _ in by}):
        for first, second in PAIRS:
            a, b = by.get((model, task, first)), by.get((model, task, second))
            if not a or not b:
                continue
            items = sorted(set(a) & set(b))
            f_only = sum(a[i] and not b[i] for i in items)
            s_only = sum(b[i] and not a[i] for i in items)
            both = sum(a[i] and b[i] for i in items)
            out.append(Paired(model=model, task=task, first=first, second=second, n=len(items), first_only=f_only,
                              second_only=s_only, both=both, neither=len(items) - f_only - s_only - both,
                              p_value=exact_mcnemar(f_only, s_only)))
    return out


def ecology(episodes: list[CogentEpisode]) -> list[Ecology]:
    groups: dict[tuple[str, str, str], list[CogentEpisode]] = defaultdict(list)
    for e in episodes:
        if e.variant.startswith("cogent"):
            groups[(e.model, e.task, e.variant)].append(e)
    out = []
    for (model, task, variant), eps in sorted(groups.items(), key=lambda kv: _order((kv[0][0], kv[0][2], kv[0][1]))):
        rejected: Counter[str] = Counter()
        for e in eps:
            rejected.update(e.rejected)
        entries = sum(len(e.entries) for e in eps)
        uses = sum(u.count for e in eps for u in e.uses)
        taken = sum(len({(u.term.casefold(), u.coiner) for u in e.uses if u.agent != u.coiner}) for e in eps)
        out.append(Ecology(
            model=model, task=task, variant=variant, episodes=len(eps), entries=entries,
            unique_terms=len({x.term.casefold() for e in eps for x in e.entries}),
            candidates=entries + sum(rejected.values()), rejected=dict(rejected.most_common()), uses=uses,
            cross_uses=sum(u.count for e in eps for u in e.uses if u.agent != u.coiner), taken_up=taken,
            uptake=uses / entries if entries else None,
        ))
    return out


def compute(episodes: list[CogentEpisode], failed: Counter[tuple[str, str, str]] | None = None,
            tokenizer: str = "backend") -> CogentStats:
    return CogentStats(episodes=len(episodes), failed=sum((failed or Counter()).values()), tokenizer=tokenizer,
                       cells=cells(episodes, failed), paired=paired(episodes), ecology=ecology(episodes))


def warnings(stats: CogentStats) -> list[str]:
    """One sentence per cell whose answers are mostly invalid or whose replies are often cut at the token limit."""
    out = []
    for c in stats.cells:
        name = f"{c.model} · {c.variant} · {c.task}"
        if c.n and c.invalid / c.n >= INVALID_WARNING:
            out.append(f"{name}: {c.invalid} of {c.n} answers invalid ({c.invalid / c.n:.0%}): no valid prediction "
                       "could be read, so these count as wrong; check the transcripts and the answer format.")
        rates = [k / m for k, m in ((c.tok_cut, c.tok_outputs), (c.cut, c.replies)) if m]
        if rates and max(rates) >= CUT_WARNING:
            out.append(f"{name}: {c.tok_cut} of {c.tok_outputs} outputs Tok reads and {c.cut} of {c.replies} replies "
                       "were cut at the token limit: Tok there measures --max-tokens more than the model; raise it.")
    return out


def failed_cells(records: Iterable[EpisodeRecord]) -> Counter[tuple[str, str, str]]:
    out: Counter[tuple[str, str, str]] = Counter()
    for record in records:
        if record.status == "failed":
            s = record.spec.get("settings", {})
            out[(model_label(record.spec.get("lineup", [])), s.get("variant", "?"), s.get("task", "?"))] += 1
    return out


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]], tok: Tokenizer = reported,
               tokenizer: str = "backend") -> CogentStats:
    """A run's COGENT statistics (registered as the protocol's ``statistics``)."""
    stream, failed = keeping_failed(rows)
    episodes = episodes_from(stream, tok)
    return compute(episodes, failed_cells(failed), tokenizer)


def term_labels(episodes: Iterable[CogentEpisode]) -> list[TermLabel]:
    """One row per accepted entry of every COGENT-family episode, for the lexical-function file."""
    return [TermLabel(task=e.task, model=e.model, variant=e.variant, episode=e.episode_id, item=e.item_id,
                      coiner=t.coiner, term=t.term, definition=t.definition)
            for e in episodes if e.variant.startswith("cogent") for t in e.entries]


def outcomes(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> list[Outcome]:
    """Each episode for ``lexicoord compare``: its item within its variant and task, right or wrong (an
    invalid answer is wrong), and Table 1's Tok."""
    return [Outcome(item=e.item_id, cell={"variant": e.variant, "task": e.task}, correct=e.correct, tokens=e.tok)
            for e in episodes_from(rows)]
