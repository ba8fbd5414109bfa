"""A study's data out: one row per participant, and Prolific's bulk-bonus list, through the one CSV writer.

Each participant's row names their condition and the episode key of every game they played (``games``,
in order): ``lexicoord runs export`` and the run viewer find each game by that key.

The bonus rule is the file's: ``per_game`` for each game the participant played to its end (not one in
which a model took their seat over, nor any after) whose stored outcome has ``when`` true, plus
``completed`` for reaching the completion code. A game ended by the experimenter still counts by its
outcome (a game cut short has not converged).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from lexicoord.analysis.cells import write_csv
from lexicoord.runs.store import Store
from lexicoord.studies.participant import STAGES, Participant
from lexicoord.studies.study import Study


def game_outcomes(study: Study, store: Store) -> dict[str, dict[str, Any]]:
    """Each stored game of the study's run by its episode key: its outcome (empty for a failed game)."""
    try:
        records = store.episodes(study.file.run_id)
    except Exception:  # no game stored yet: the run does not exist
        return {}
    return {r.key: dict(r.outcome or {}) for r in records if r.status == "done"}


def games_played(study: Study, p: Participant, outcomes: dict[str, dict[str, Any]]) -> list[tuple[str, bool]]:
    """The episode key of each game the participant played to its end (their group's own games, up to the one a
    model took their seat over in), and whether the bonus rule counts it."""
    group = study.state.groups.get(p.group or "")
    if group is None:
        return []
    last = p.dropped.game - 1 if p.dropped is not None and p.dropped.game is not None else None
    out = []
    for game in group.games:
        if last is not None and game.number > last:
            break
        outcome = outcomes.get(game.key)
        if outcome is not None:
            out.append((game.key, bool(outcome.get(study.file.bonus.when))))
    return out


def games_counted(study: Study, p: Participant, outcomes: dict[str, dict[str, Any]]) -> tuple[int, int]:
    """(games the participant played to their end, of those the ones the bonus rule counts)."""
    games = games_played(study, p, outcomes)
    return len(games), sum(counts for _, counts in games)


def bonus(study: Study, p: Participant, outcomes: dict[str, dict[str, Any]]) -> float:
    rule = study.file.bonus
    _, counted = games_counted(study, p, outcomes)
    return round(rule.per_game * counted + (rule.completed if p.outcome == "completed" else 0.0), 2)


def participant_rows(study: Study, store: Store) -> tuple[list[str], list[list[Any]]]:
    """The participants' table: ids, outcome and code, stage times, quiz, survey, attention, games, bonus."""
    file = study.file
    outcomes = game_outcomes(study, store)
    survey = [q.id for q in file.survey.questions]
    checks = [q.id for q in file.survey.questions if q.expect is not None]
    head = ["participant_id", "study_id", "session_id", "outcome", "code", "stage", "consent",
            *[f"entered_{s}" for s in STAGES], *[f"seconds_{s}" for s in STAGES[:-1]],
            "quiz_attempts", "quiz_passed", "condition", "group", "seat", "games_played", "games_counted", "games",
            "dropped_reason", "dropped_game", "attention_passed", "attention_failed",
            *[f"survey_{q}" for q in survey], *[f"attention_{q}" for q in checks], "bonus"]
    rows = []
    for p in sorted(study.participants.values(), key=lambda p: p.entered.get("consent", 0.0)):
        games = games_played(study, p, outcomes)
        played, counted = len(games), sum(c for _, c in games)
        rows.append([
            p.pid, p.study_ref or "", p.session or "", p.outcome or "", p.code or "", p.stage,
            "" if p.consent is None else p.consent,
            *[_when(p.entered.get(s)) for s in STAGES], *[_num(p.seconds_in(s)) for s in STAGES[:-1]],
            len(p.quiz), any(a.passed for a in p.quiz) if p.quiz else "", p.condition or "", p.group or "",
            p.seat or "", played, counted, " ".join(key for key, _ in games), p.dropped.reason if p.dropped else "",
            "" if p.dropped is None or p.dropped.game is None else p.dropped.game,
            sum(p.attention.values()), sum(not v for v in p.attention.values()),
            *[p.survey.get(q, "") for q in survey], *["" if q not in p.attention else p.attention[q] for q in checks],
            f"{bonus(study, p, outcomes):.2f}",
        ])
    return head, rows


def bonus_rows(study: Study, store: Store) -> list[list[str]]:
    """``participant_id,amount`` for every participant owed a bonus (amount > 0), as Prolific's bulk bonus takes it."""
    outcomes = game_outcomes(study, store)
    out = []
    for p in study.participants.values():
        amount = bonus(study, p, outcomes)
        if amount > 0:
            out.append([p.pid, f"{amount:.2f}"])
    return out


def write_participants(study: Study, store: Store, target: Path | TextIO) -> None:
    head, rows = participant_rows(study, store)
    write_csv(target, head, rows)


def write_bonus(study: Study, store: Store, target: Path | TextIO) -> None:
    """Prolific's bulk-bonus list: one ``participant_id,amount`` line each, with no header line (Prolific's box
    takes the lines alone)."""
    write_csv(target, None, bonus_rows(study, store))


def _when(t: float | None) -> str:
    import datetime as dt

    return "" if t is None else dt.datetime.fromtimestamp(t, dt.UTC).isoformat(timespec="seconds")


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:.1f}"
