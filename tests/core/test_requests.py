"""A request's schema is the one check for every seat: a model's reply and a person's answer alike."""

import asyncio
import json

import pytest

from lexicoord.core.seat import Answer, Request
from lexicoord.protocols.coordination.moves import MAX_JUSTIFICATION, STATEMENT_SCHEMA, choice_schema
from lexicoord.seats.human import HumanSeat

OPTIONS = ["the land alongside a river", "a financial institution"]
CHOOSE = Request(kind="choose", round=1, schema=choice_schema(OPTIONS))
CLARIFY = Request(kind="clarify", round=1, schema=STATEMENT_SCHEMA, actions=("pass", "end"))


def test_a_valid_choice_passes() -> None:
    assert CHOOSE.check({"choice": OPTIONS[1], "justification": "x" * MAX_JUSTIFICATION}) is None


def test_a_too_long_justification_is_refused_naming_the_limit() -> None:
    problem = CHOOSE.check({"choice": OPTIONS[0], "justification": "x" * (MAX_JUSTIFICATION + 1)})
    assert problem is not None and problem.startswith("justification:")
    assert f"limit of {MAX_JUSTIFICATION} characters" in problem and "xxxxxxxxxx" not in problem, problem


def test_an_option_that_is_not_offered_is_refused() -> None:
    problem = CHOOSE.check({"choice": "a place to sit", "justification": "why not"})
    assert problem is not None and problem.startswith("choice:") and "is not one of" in problem
    assert OPTIONS[0] in problem


@pytest.mark.parametrize("value, where", [
    ({"choice": OPTIONS[0]}, "'justification' is a required property"),
    ({"choice": OPTIONS[0], "justification": ""}, "justification:"),
    ({"choice": OPTIONS[0], "justification": "ok", "extra": 1}, "Additional properties"),
    ("just text", "is not of type 'object'"),
])
def test_other_malformed_choices_are_refused(value, where) -> None:
    problem = CHOOSE.check(value)
    assert problem is not None and where in problem


def test_closed_choices_and_free_text_have_schemas_of_their_own() -> None:
    pick = Request(kind="judge", choices=("yes", "no"))
    assert pick.check({"choice": "yes"}) is None and "is not one of" in pick.check({"choice": "maybe"})
    say = Request(kind="say", prompt="hello")
    assert say.check({"text": "hi"}) is None and say.check({}) is not None
    assert Request(kind="x", schema={"type": "object"}).answer_schema == {"type": "object"}, "'schema' is an alias"


async def ask(seat: HumanSeat, request: Request, **answer) -> tuple[Answer, bool]:
    async def person() -> bool:
        while not seat.waiting:
            await asyncio.sleep(0.002)
        assert seat.pending is request
        return seat.submit(answer.pop("value", None), **answer)

    return tuple(await asyncio.gather(seat.answer(request), person()))  # type: ignore[return-value]


async def test_a_person_s_valid_answer_is_delivered_with_its_raw_json() -> None:
    value = {"choice": OPTIONS[0], "justification": "by the water"}
    answer, taken = await ask(HumanSeat("p", timeout=5), CHOOSE, value=value)
    assert taken and answer.ok and answer.value == value and json.loads(answer.raw) == value


async def test_a_person_s_invalid_answer_is_a_failure_that_keeps_the_raw_answer() -> None:
    long = {"choice": OPTIONS[0], "justification": "x" * 500}
    answer, taken = await ask(HumanSeat("p", timeout=5), CHOOSE, value=long)
    assert taken and not answer.ok and answer.value is None
    assert answer.failure == CHOOSE.check(long) and json.loads(answer.raw) == long

    answer, _ = await ask(HumanSeat("p", timeout=5), CHOOSE, value={"choice": "nope", "justification": "j"})
    assert not answer.ok and answer.failure.startswith("choice:")


async def test_a_person_may_take_an_action_the_request_offers_and_no_other() -> None:
    answer, _ = await ask(HumanSeat("p", timeout=5), CLARIFY, action="pass")
    assert answer == Answer(action="pass") and not answer.ok
    answer, _ = await ask(HumanSeat("p", timeout=5), CLARIFY, action="end")
    assert answer == Answer(action="end")
    answer, _ = await ask(HumanSeat("p", timeout=5), CHOOSE, action="end")
    assert answer.action is None and answer.failure == "'end' is not offered here" and answer.raw == "end"


async def test_only_the_first_answer_counts_and_none_is_taken_when_nothing_is_asked() -> None:
    seat = HumanSeat("p", timeout=5)
    assert seat.submit({"text": "early"}) is False and seat.pending is None

    async def person() -> tuple[bool, bool]:
        while not seat.waiting:
            await asyncio.sleep(0.002)
        return seat.submit({"statement": "first"}), seat.submit({"statement": "second"})

    answer, (first, second) = await asyncio.gather(seat.answer(CLARIFY), person())
    assert (first, second) == (True, False) and answer.value == {"statement": "first"}
    assert not seat.waiting and seat.pending is None


async def test_a_person_who_does_not_answer_in_time_fails_the_move() -> None:
    changes = []
    seat = HumanSeat("p", timeout=0.02)
    seat.listener = lambda: changes.append(seat.pending)
    answer = await seat.answer(CHOOSE)
    assert answer == Answer(failure="p did not answer within 0.02 s")
    assert changes == [CHOOSE, None], "a front end is told when the request starts and ends"
