"""A participant's stages: what each accepts, written as real pages and real people send it."""

from __future__ import annotations

from typing import Any

import pytest

from lexicoord.studies.participant import Participant, StageError, answer, clean_pid, finish, following
from tests.studies.conftest import study_of, values

STUDY = study_of(values())


def fresh(stage: str = "consent") -> Participant:
    p = Participant(pid="p1", token_hash="x")
    p.move_to(stage, 1.0)  # type: ignore[arg-type]
    return p


@pytest.mark.parametrize("text", ["5f1e2d3c4b5a69788796a5b4", "alice", "p-01", "lab_7", "x.y@uni.example", " bob "])
def test_participant_ids_as_pools_write_them_are_taken(text: str) -> None:
    assert clean_pid(text) == text.strip()


@pytest.mark.parametrize("text", ["", "   ", "a b", "<script>", "../etc", "=cmd", "x" * 65, "é", None, "a\nb"])
def test_malformed_participant_ids_are_refused(text: str | None) -> None:
    with pytest.raises(StageError) as err:
        clean_pid(text)
    assert err.value.status == 400


def test_a_quiz_or_survey_without_questions_is_no_stage() -> None:
    bare = study_of(values(quiz={"questions": []}, survey={"questions": []}))
    assert following(bare, "instructions") == "lobby"
    assert following(bare, "game") == "done"
    assert following(STUDY, "instructions") == "quiz" and following(STUDY, "game") == "survey"


@pytest.mark.parametrize("claimed", ["survey", "lobby", "done", "quiz", "", "CONSENT"])
def test_an_answer_for_another_stage_is_refused_and_changes_nothing(claimed: str) -> None:
    p = fresh()
    before = p.model_dump()
    with pytest.raises(StageError) as err:
        answer(STUDY, p, claimed, {"agree": True, "answers": {"clear": 7}}, 2.0)
    assert err.value.code == "wrong_stage"
    assert p.model_dump() == before


@pytest.mark.parametrize("agree", ["yes", 1, None, "true"])
def test_consent_is_a_yes_or_no_and_nothing_else(agree: Any) -> None:
    with pytest.raises(StageError):
        answer(STUDY, fresh(), "consent", {"agree": agree}, 2.0)


def test_declining_consent_ends_with_its_own_code() -> None:
    p = fresh()
    answer(STUDY, p, "consent", {"agree": False}, 2.0)
    assert (p.stage, p.outcome, p.code) == ("done", "no_consent", "NOPE2")


def test_the_quiz_gives_its_attempts_then_ends_with_the_failed_code() -> None:
    p = fresh("quiz")
    told = answer(STUDY, p, "quiz", {"answers": {"goal": "Never"}}, 2.0)
    assert told == {"wrong": ["goal"], "attempts_left": 1} and p.stage == "quiz"
    answer(STUDY, p, "quiz", {"answers": {}}, 3.0)  # nothing chosen is wrong too
    assert (p.outcome, p.code, len(p.quiz)) == ("failed_quiz", "QUIZ3", 2)


@pytest.mark.parametrize("given", ["all agree", " All agree", "All agree ", 1, ["All agree"]])
def test_a_quiz_answer_is_an_offered_option_exactly(given: Any) -> None:
    p = fresh("quiz")
    answer(STUDY, p, "quiz", {"answers": {"goal": given}}, 2.0)
    assert p.quiz[-1].wrong == ["goal"]


def test_the_right_quiz_answer_leads_to_the_lobby() -> None:
    p = fresh("quiz")
    answer(STUDY, p, "quiz", {"answers": {"goal": "All agree"}}, 2.0)
    assert p.stage == "lobby" and p.quiz[-1].passed


SURVEY_OK: list[tuple[dict[str, Any], dict[str, Any], dict[str, bool]]] = [
    ({"clear": 7, "colour": "Blue"}, {"clear": 7, "colour": "Blue"}, {"colour": True}),
    ({"clear": 1, "colour": "Red", "comments": ""}, {"clear": 1, "colour": "Red"}, {"colour": False}),
    ({"clear": "4", "colour": "Blue", "comments": "  nice <b>game</b>  "},
     {"clear": 4, "colour": "Blue", "comments": "  nice <b>game</b>  "}, {"colour": True}),
    ({"clear": 6.0, "colour": "Blue", "comments": "=1+1"}, {"clear": 6, "colour": "Blue", "comments": "=1+1"},
     {"colour": True}),
    ({"clear": " 3 ", "colour": "Blue", "comments": " \n "}, {"clear": 3, "colour": "Blue"}, {"colour": True}),
]


@pytest.mark.parametrize(("given", "kept", "attention"), SURVEY_OK)
def test_survey_answers_are_kept_as_given_with_attention_checks_scored(given: dict[str, Any], kept: dict[str, Any],
                                                                       attention: dict[str, bool]) -> None:
    p = fresh("survey")
    answer(STUDY, p, "survey", {"answers": given}, 2.0)
    assert p.survey == kept and p.attention == attention
    assert (p.outcome, p.code) == ("completed", "DONE1")


SURVEY_BAD = [
    {"colour": "Blue"},                              # a required answer missing
    {"clear": 8, "colour": "Blue"},                  # off the scale
    {"clear": 0, "colour": "Blue"},
    {"clear": True, "colour": "Blue"},               # a bool is no point of a scale
    {"clear": "seven", "colour": "Blue"},
    {"clear": 6.5, "colour": "Blue"},
    {"clear": 5, "colour": "blue"},                  # not an offered option
    {"clear": 5, "colour": "Blue", "comments": "x" * 201},
    {"clear": 5, "colour": "Blue", "age": 30},       # no such question
    {"clear": 5, "colour": "Blue", "comments": {"$ne": 1}},
    {"clear": "   ", "colour": "Blue"},             # spaces are no answer to a required question
    {"clear": 5, "colour": " \n\t"},
]


@pytest.mark.parametrize("given", SURVEY_BAD)
def test_bad_survey_answers_are_refused_and_nothing_is_kept(given: dict[str, Any]) -> None:
    p = fresh("survey")
    with pytest.raises(StageError):
        answer(STUDY, p, "survey", {"answers": given}, 2.0)
    assert p.survey == {} and p.outcome is None and p.stage == "survey"


def test_an_outcome_once_given_is_never_replaced() -> None:
    p = fresh("game")
    assert finish(STUDY, p, "dropped", 2.0)
    assert not finish(STUDY, p, "completed", 3.0)
    assert (p.outcome, p.code) == ("dropped", "GONE5")


def test_the_lobby_and_the_game_take_no_answers() -> None:
    for stage in ("lobby", "game"):
        with pytest.raises(StageError) as err:
            answer(STUDY, fresh(stage), stage, {}, 2.0)
        assert err.value.code == "wait"
