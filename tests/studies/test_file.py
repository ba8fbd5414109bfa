"""Study files: the shipped example, and malformed files each told in one sentence at its line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lexicoord.cli.app import app as cli
from lexicoord.experiments.source import ExperimentError
from lexicoord.studies.file import load

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "experiments" / "studies" / "lexicoord-pilot.toml"
GOOD = EXAMPLE.read_text(encoding="utf-8")


def test_the_shipped_study_reads_as_the_paper_sets_it_two_people_and_four_agents() -> None:
    study = load(EXAMPLE, environ={})
    assert study.protocol == "coordination"
    assert study.group.people == 2 and len(study.group.agents) == 4
    assert study.group.stand_in == "local/smollm2-135m"
    assert [q.id for q in study.quiz.questions] == ["goal", "clarify"]
    assert study.survey.questions[1].expect == "Blue"
    assert study.completion.redirect and "{code}" in study.completion.redirect


def test_the_model_comes_from_the_environment_when_set() -> None:
    study = load(EXAMPLE, environ={"STUDY_MODEL": "openai/gpt-4o-mini"})
    assert {a.model for a in study.group.agents} == {"openai/gpt-4o-mini"}


def _line_of(text: str, needle: str) -> int:
    """The line a key is written on (not a comment that mentions it)."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.strip().startswith(needle))


# (what is changed in the good file, the key the problem names, what the sentence says)
BAD = [
    ('people = 2', 'people = 0', "group.people", "greater than or equal to 1"),
    ('games = 2 ', 'games = "two" ', "group.games", "integer"),
    ('protocol = "coordination"', 'protocol = "chess"', "protocol", "chess"),
    ('seat_timeout = 90', 'seat_timeout = 1', "game.seat_timeout", "greater than or equal to 10"),
    ('seat_timeout = 90', 'seat_timout = 90', "game.seat_timout", "unknown key"),
    ('clarification_bound = 3', 'agents = 3', "game", "[group] agents"),
    ('answer = "The leader (Player 1)"', 'answer = "The boss"', "quiz.questions.1", "not one of the options"),
    ('expect = "Blue"', 'expect = "Purple"', "survey.questions.1", "not one of the options"),
    ('kind = "likert"', 'kind = "slider"', "survey.questions.0.kind", "likert"),
    ('dropped = "C5LXDROPPED"', 'dropped = "C1LXCOMPLETE"', "completion.codes", "same code"),
    ('no_group = "C4LXNOGROUP"', 'no_group = "has space"', "completion.codes", "no_group"),
    ('redirect = "https://app.prolific.com/submissions/complete?cc={code}"',
     'redirect = "https://app.prolific.com/submissions/complete"', "completion.redirect", "{code}"),
    ('redirect = "https://app.prolific.com/submissions/complete?cc={code}"',
     'redirect = "javascript:alert(1)//{code}"', "completion.redirect", "http"),
    ('timeout = 300', 'timeout = 1', "lobby.timeout", "greater than or equal to 5"),
    ('grace = 60', 'grace = -5', "dropout.grace", "greater than or equal to 5"),
    ('items = { builtin = "builtin" }', 'items = { builtin = "missing/items.jsonl" }', "items.builtin",
     "no file or folder"),
    ('name = "lexicoord-pilot"', 'name = "../etc"', "name", "not allowed"),
    ('per_game = 0.25', 'per_game = -1', "bonus.per_game", "greater than or equal to 0"),
    ('id = "clarify"', 'id = "goal"', "quiz.questions", "used twice"),
    ('id = "comments"', 'id = "Comments!"', "survey.questions.2.id", "lower-case"),
    ('title = "A word game with others"', 'titel = "A word game"', "titel", "unknown key"),
    ('when = "converged"', 'when = "convergd"', "bonus.when", "one of converged, correct"),
    ('when = "converged"', 'when = "rounds"', "bonus.when", "not a yes-or-no field"),
    ('required = false', 'expect = 5\nrequired = false', "survey.questions.2", "the text to be written"),
]


@pytest.mark.parametrize(("old", "new", "key", "says"), BAD, ids=[b[1][:40] for b in BAD])
def test_a_bad_study_file_is_one_sentence_at_its_line(tmp_path: Path, old: str, new: str, key: str, says: str) -> None:
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    path = tmp_path / "study.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ExperimentError) as err:
        load(path, environ={})
    problems = [str(p) for p in err.value.problems]
    match = [p for p in problems if f": {key}" in p and says in p]
    assert match, problems
    where = re.match(rf"{re.escape(str(path))}:(\d+): ", match[0])
    assert where, match[0]
    # The line named is the changed key's, or the table it sits in: at most a few lines above it.
    changed = _line_of(text, new.strip().splitlines()[0])
    assert 0 <= changed - int(where.group(1)) <= 12, (changed, match[0])


def test_a_file_that_is_not_toml_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(GOOD.replace('people = 2', 'people = = 2'), encoding="utf-8")
    with pytest.raises(ExperimentError) as err:
        load(path, environ={})
    assert re.match(rf"{re.escape(str(path))}:{_line_of(GOOD, 'people = 2')}: not valid TOML", str(err.value.problems[0]))


def test_the_check_command_exits_2_with_each_problem_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(GOOD.replace("people = 2", "people = 0").replace("timeout = 300", "timeout = 1"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["study", "check", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 2 and all(str(path) in line for line in lines), result.output


def test_the_check_command_says_what_a_good_file_will_do() -> None:
    result = CliRunner().invoke(cli, ["study", "check", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "groups of 2 people and 4 agent(s)" in result.output
    assert "quiz -> lobby -> 2 game(s) -> survey" in result.output


def test_the_shipped_study_serves_its_pages_on_the_embedded_model(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from lexicoord.models.pool import ModelPool
    from lexicoord.runs.store import Store
    from lexicoord.studies.serve import StudyPart, services_for
    from lexicoord.web.app import create_app

    study = load(EXAMPLE, environ={})
    services = services_for(study, Store(str(tmp_path / "s.db")), ModelPool(cache=False))
    app = create_app(services, allowed_hosts=["testserver"], parts=[StudyPart(study, services, "k", False)],
                     viewer=False)
    with TestClient(app) as client:
        assert "study.js" in client.get("/studies/lexicoord-pilot/?PROLIFIC_PID=abc").text
        pages = client.get("/api/studies/lexicoord-pilot/pages").json()
    assert pages["title"] == "A word game with others" and "<strong>Purpose.</strong>" in pages["consent"]
    assert [q["id"] for q in pages["survey"]] == ["clear", "attention", "comments"]
