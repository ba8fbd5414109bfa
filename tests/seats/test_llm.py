import pytest

from lexicoord.core.seat import Request
from lexicoord.models import GenerateConfig, Model
from lexicoord.models.observe import current_agent
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.coordination.moves import choice_schema
from lexicoord.seats import LLMSeat


async def test_agent_keeps_a_private_history() -> None:
    seen = []
    model = Model(ScriptedProvider("s", lambda msgs, cfg: seen.append(list(msgs)) or f"answer {len(seen)}"))
    alice = LLMSeat("alice", model, system_prompt="You are alice.")
    bob = LLMSeat("bob", model)
    await alice.ask("first?", remember=True)
    await bob.ask("hello?")
    await alice.ask("second?")
    assert [m.content for m in seen[2]] == ["You are alice.", "first?", "answer 1", "second?"]
    assert [m.content for m in seen[1]] == ["hello?"], "bob never sees alice's history"


async def test_structured_ask_retries_an_unparseable_reply_with_another_seed() -> None:
    seeds = []

    def reply(msgs, cfg):
        seeds.append(cfg.seed)
        return "not json" if len(seeds) == 1 else '{"choice": "b"}'

    agent = LLMSeat("a", Model(ScriptedProvider("s", reply)), config=GenerateConfig(seed=5))
    out = await agent.ask_structured("pick", GenerateConfig(choices=("a", "b")))
    assert out.choice == "b" and seeds[0] == 5 and seeds[1] != 5


async def test_structured_ask_returns_the_raw_reply_when_it_stays_unparseable() -> None:
    agent = LLMSeat("a", Model(ScriptedProvider("s", lambda m, c: "still prose")))
    out = await agent.ask_structured("pick", GenerateConfig(choices=("a", "b")), parse_retries=2)
    assert not out.ok and out.text == "still prose" and "no JSON" in out.parse_error


# answer(request): the one way a protocol asks a model seat ------------------------------------------------

OPTIONS = ["the land alongside a river", "a financial institution"]


async def test_answer_follows_the_request_schema_and_keeps_the_raw_reply() -> None:
    configs = []

    def reply(msgs, cfg):
        configs.append(cfg)
        return {"choice": OPTIONS[1], "justification": f"I am {current_agent.get()}"}

    seat = LLMSeat("a1", Model(ScriptedProvider("s", reply)))
    request = Request(kind="choose", prompt="pick", schema=choice_schema(OPTIONS), max_tokens=77, temperature=0.3)
    answer = await seat.answer(request)
    assert answer.ok and answer.value == {"choice": OPTIONS[1], "justification": "I am a1"}
    assert request.check(answer.value) is None and answer.raw == '{"choice": "a financial institution", ' \
                                                                 '"justification": "I am a1"}'
    assert configs[0].json_schema == request.answer_schema and configs[0].max_tokens == 77
    assert configs[0].temperature == 0.3 and not seat.history, "not remembered unless the request says so"


async def test_a_temperature_set_on_the_seat_wins_over_the_requests() -> None:
    temps = []
    model = Model(ScriptedProvider("s", lambda m, c: temps.append(c.temperature) or {"text": "x"}))
    seat = LLMSeat("a", model, config=GenerateConfig(temperature=0.9))
    await seat.answer(Request(kind="say", prompt="hi", schema={"type": "object"}, temperature=0.1))
    assert temps == [0.9]


async def test_closed_choices_and_free_text_answers() -> None:
    seat = LLMSeat("a", Model(ScriptedProvider("s", ["yes", "just words"])))
    picked = await seat.answer(Request(kind="judge", prompt="ok?", choices=("yes", "no")))
    assert picked.value == {"choice": "yes"}
    said = await seat.answer(Request(kind="say", prompt="talk", remember=True))
    assert said.value == {"text": "just words"} and [m.content for m in seat.history] == ["talk", "just words"]


async def test_an_unparseable_reply_is_a_failed_answer_with_its_raw_text() -> None:
    seat = LLMSeat("a", Model(ScriptedProvider("s", ["prose", "more prose"])))
    answer = await seat.answer(Request(kind="choose", prompt="pick", schema=choice_schema(OPTIONS)))
    assert not answer.ok and answer.value is None and answer.raw == "more prose" and "no JSON" in answer.failure


@pytest.mark.embedded
async def test_the_embedded_model_answers_a_coordination_request_within_its_schema() -> None:
    from lexicoord.models import get_model
    from lexicoord.protocols.coordination.moves import choose_request
    from lexicoord.protocols.coordination.views import RoundView

    view = RoundView(sentence="I sat on the bank and fished.", word="bank", options=OPTIONS, round=1, leader="a1")
    request = choose_request(view, "a2")
    seat = LLMSeat("a2", get_model("local/smollm2-135m", cache=False), config=GenerateConfig(seed=1, temperature=0))
    answer = await seat.answer(request)
    assert answer.ok, (answer.failure, answer.raw)
    assert request.check(answer.value) is None and answer.value["choice"] in OPTIONS


@pytest.mark.embedded
async def test_a_reply_the_embedded_model_stops_at_the_token_limit_says_so() -> None:
    from lexicoord.models import get_model
    from lexicoord.models.observe import ModelCallRecord, observing

    seen: list[ModelCallRecord] = []
    seat = LLMSeat("a", get_model("local/smollm2-135m", cache=False))
    request = Request(kind="say", prompt="Write a long story about a lighthouse keeper and the sea.", max_tokens=16,
                      temperature=0.0)
    with observing(seen.append):
        cut = await seat.answer(request)
    assert cut.ok and cut.truncated and cut.tokens == 16, "llama.cpp stopped at max_tokens"
    assert seen[-1].finish_reason == "length", "the call's record keeps why the backend stopped"
    whole = await seat.answer(request.model_copy(update={"prompt": "Reply with the single word: yes",
                                                         "max_tokens": 200}))
    assert not whole.truncated and (whole.tokens or 0) < 200
