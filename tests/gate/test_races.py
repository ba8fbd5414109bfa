"""What a pipeline meets in the field: answers at once, retried answers, two processes on one store, a team that
would overrule the person, a scorer that barely answers. None of it may end in a wrong ``clear``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from lexicoord.gate import Gate, GateConflict, records
from tests.gate.conftest import MakeGate, choice, proposal, scripted

CUPS = ["the red cup", "the blue cup"]
THREE_LOOKS = {"agent": [proposal("ambiguous", "Which cup?")], "agent-2": [proposal("ambiguous", "Which shelf?")],
               "agent-3": [proposal("clear")]}


async def test_two_answers_at_once_one_counts_the_other_is_refused(make_gate: MakeGate) -> None:
    for first in range(3):  # whichever comes first, the other is refused and nothing of it is recorded
        gate = make_gate("single", {"agent": [proposal("ambiguous", "Which cup?")], "agent-2": [proposal("clear")]})
        v = await gate.check("Bring me the cup.")
        calls = [gate.answer(v.gate_id, text="the RED one"), gate.answer(v.gate_id, text="the BLUE one"),
                 gate.answer(v.gate_id, refuse=True)]
        calls = calls[first:] + calls[:first]
        results = await asyncio.gather(*calls, return_exceptions=True)
        taken = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, GateConflict)]
        assert len(taken) == 1 and len(refused) == 2, results
        done = await gate.get(v.gate_id)
        assert len(done.clarifications) == 1
        said = done.clarifications[0]
        assert done.status == ("refuse" if said.refused else "clear")


async def test_a_retried_answer_never_answers_the_next_question(make_gate: MakeGate) -> None:
    gate = make_gate("single", THREE_LOOKS, clarifications=2)
    v = await gate.check("Bring me the cup.")
    assert v.asked == 1
    second = await gate.answer(v.gate_id, text="the red one", question=1)
    assert second.status == "ask" and second.asked == 2 and second.question == "Which shelf?"
    again = await gate.answer(v.gate_id, text="the red one", question=1)  # a resumed caller sends it again
    assert again.status == "ask" and again.asked == 2 and len(again.clarifications) == 1
    with pytest.raises(GateConflict, match="already answered otherwise"):
        await gate.answer(v.gate_id, text="the green one", question=1)
    with pytest.raises(GateConflict, match="asking question 2, not 3"):
        await gate.answer(v.gate_id, text="the top one", question=3)
    done = await gate.answer(v.gate_id, text="the top one", question=2)
    assert done.status == "clear" and [c.text for c in done.clarifications] == ["the red one", "the top one"]


async def test_the_players_cannot_overrule_the_persons_choice(make_gate: MakeGate) -> None:
    red = [choice("the red cup")] * 2
    gate = make_gate("coalition", {"player-1": red, "player-2": [choice("the blue cup"), choice("the red cup")],
                                   "player-3": red})
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    done = await gate.answer(v.gate_id, choice="the blue cup")
    assert done.status == "refuse" and "not on the person's 'the blue cup'" in (done.reason or "")


async def test_a_scorer_that_barely_names_a_letter_is_an_error_not_a_certainty(make_gate: MakeGate) -> None:
    weak = {"text": "The", "__logprobs__": {"A": -3.0, "The": -0.06}}  # A holds 5 %: normalised, it would be 100 %
    gate = make_gate("conformal", {"scorer": [weak]}, qhat=0.5)
    v = await gate.check("Hand me the cup.", candidates=CUPS)
    assert v.status == "error" and "held 5%" in (v.reason or "")
    assert v.conformal is not None and v.conformal.letter_mass == pytest.approx(0.0498, abs=1e-3)


def test_a_threshold_holds_for_its_own_model_only() -> None:
    from lexicoord.errors import ConfigError
    from lexicoord.gate import GateSettings

    with pytest.raises(ConfigError, match="calibrated with local/a, not local/b"):
        GateSettings(policy="conformal", models=["local/b"], qhat=0.4, calibrated_model="local/a").check()


async def test_two_processes_on_one_store_never_both_play_a_check(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    model = scripted({"agent": [proposal("ambiguous", "Which cup?")], "agent-2": [proposal("clear")]})
    db = str(tmp_path / "g.db")
    update = records.update

    def slow_update(*args: Any, **kwargs: Any) -> bool:  # a busy store: the row lands well after the seat asks
        time.sleep(0.2)
        return update(*args, **kwargs)

    monkeypatch.setattr(records, "update", slow_update)
    async with Gate("single", [model], db=db) as a, Gate("single", [model], db=db) as b:
        v = await a.check("Bring me the cup.")
        seen = await b.get(v.gate_id)  # b reads the row; it does not start a second copy
        assert seen.status == "ask" and seen.question == "Which cup?" and v.gate_id not in b._live
        with pytest.raises(GateConflict, match="another process"):
            await b.answer(v.gate_id, text="the blue one")
        done = await a.answer(v.gate_id, text="the blue one")
        assert done.status == "clear" and (await b.get(v.gate_id)).status == "clear"
        assert len(a.store.episodes(v.run_id, conflicts=True)) == 1


async def test_a_process_that_stops_hands_its_checks_over(tmp_path: Path) -> None:
    model = scripted({"agent": [proposal("ambiguous", "Which cup?")], "agent-2": [proposal("clear")]})
    db = str(tmp_path / "g.db")
    async with Gate("single", [model], db=db) as b:
        a = Gate("single", [model], db=db)
        v = await a.check("Bring me the cup.")
        await a.aclose()  # its claim is given up as it stops
        assert (await b.answer(v.gate_id, text="the blue one")).status == "clear"


async def test_a_late_write_never_undoes_a_final_verdict_and_a_saved_episode_settles_the_row(
        make_gate: MakeGate) -> None:
    gate = make_gate("single", {"agent": [proposal("clear")]})
    v = await gate.check("Open the door.")
    with gate.store.writing() as s:  # an earlier state, written late
        assert not records.update(s, v.gate_id, "pending", {}, None)
    assert (await gate.get(v.gate_id)).status == "clear"
    # the verdict's write was lost (the row still says pending) but the episode was saved: read, it settles
    with gate.store.writing() as s:
        from lexicoord.runs.schema import GateRow

        row = s.get(GateRow, v.gate_id)
        row.status, row.owner = "pending", None
    again = await gate.get(v.gate_id)
    assert again.status == "clear" and again.model_calls == 1  # from the saved episode, not played again


async def test_a_starting_server_goes_on_with_the_checks_left_unsettled(tmp_path: Path) -> None:
    model = scripted({"agent": [proposal("ambiguous", "Which cup?")], "agent-2": [proposal("clear")]})
    db = str(tmp_path / "g.db")
    first = Gate("single", [model], db=db, person_timeout=0.3)
    v = await first.check("Bring me the cup.")
    await first.aclose()  # stops while asking; nobody reads the check again
    async with Gate("single", [model], db=db, person_timeout=0.3) as second:
        assert await second.resume_unsettled() == 1
        await asyncio.sleep(0.6)  # the question's time runs out: the check ends, and is in the record
        assert (await second.get(v.gate_id)).status == "refuse"
        assert [r.outcome["status"] for r in second.store.episodes(v.run_id)] == ["refuse"]


def _clear(messages: Any, config: Any) -> dict[str, Any]:
    return proposal("clear")


async def test_thirty_checks_at_once_share_their_transactions_and_each_keeps_its_own_verdict_and_record(
        make_gate: MakeGate, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = make_gate("single", _clear)
    await gate.check("Warm up: open the door.")
    transactions = 0
    writing = gate.store.writing

    def counted(**kw: Any) -> Any:
        nonlocal transactions
        transactions += 1
        return writing(**kw)

    monkeypatch.setattr(gate.store, "writing", counted)
    verdicts = await asyncio.gather(*(gate.check(f"Put mug {i} on shelf {i}.") for i in range(30)))
    assert [v.status for v in verdicts] == ["clear"] * 30 and len({v.gate_id for v in verdicts}) == 30
    # Alone, each check writes three times (its row, its model's answer, its episode with its verdict): 90.
    assert transactions <= 45, f"{transactions} transactions for 30 checks at once"
    saved = {e.spec["item"]["instruction"]: e for e in gate.store.episodes(gate.run_id)}
    for i, v in enumerate(verdicts):
        assert saved[f"Put mug {i} on shelf {i}."].key == v.episode_key and v.model_calls == 1
        row = records.get(gate.store, v.gate_id)
        assert row is not None and row.status == "clear" and row.owner is None


async def test_a_check_whose_record_cannot_be_stored_is_an_error_and_the_checks_beside_it_are_kept(
        make_gate: MakeGate, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = make_gate("single", _clear)
    save = gate.store.save_episodes_in

    def refusing(s: Any, batch: Any) -> list[int]:
        if any(record.spec["item"]["instruction"] == "Pour the milk." for record, _ in batch):
            raise RuntimeError("the disk is full")
        return save(s, batch)

    monkeypatch.setattr(gate.store, "save_episodes_in", refusing)
    asked = ["Open the door.", "Pour the milk.", "Close the window.", "Wipe the table."]
    verdicts = await asyncio.gather(*(gate.check(text) for text in asked))
    assert [v.status for v in verdicts] == ["clear", "error", "clear", "clear"]
    assert "could not be stored: the disk is full" in (verdicts[1].reason or "")
    kept = {e.spec["item"]["instruction"] for e in gate.store.episodes(gate.run_id)}
    assert kept == {"Open the door.", "Close the window.", "Wipe the table."}
    for v in verdicts:  # every row final, as its verdict says; none says clear without its record
        row = records.get(gate.store, v.gate_id)
        assert row is not None and row.status == v.status and row.owner is None


async def test_two_gates_on_one_store_each_checking_at_once_keep_every_check_once(store_url: str) -> None:
    """On SQLite and on a PostgreSQL server: two gates (two processes' worth) sharing a store, each with checks at
    once whose writes share transactions; every check ends clear, once, with its own record."""
    model = scripted(_clear)
    async with Gate("single", [model], db=store_url) as a, Gate("single", [model], db=store_url) as b:
        asked = [(gate, f"Put cup {i} on tray {i}.") for i in range(12) for gate in (a, b)]
        verdicts = await asyncio.gather(*(gate.check(text) for gate, text in asked))
        assert [v.status for v in verdicts] == ["clear"] * 24 and len({v.gate_id for v in verdicts}) == 24
        saved = a.store.episodes(a.run_id, conflicts=True)
        assert sorted(e.spec["item"]["instruction"] for e in saved) == sorted(text for _, text in asked)
        for v in verdicts:
            row = records.get(b.store, v.gate_id)
            assert row is not None and row.status == "clear" and row.owner is None


async def test_a_check_whose_outcome_cannot_be_read_is_an_error_stored_with_its_record(
        make_gate: MakeGate, monkeypatch: pytest.MonkeyPatch) -> None:
    from lexicoord.gate import gate as gate_module

    decide = gate_module._decision

    def unreadable(record: Any, policy: str) -> Any:
        if record.spec["item"]["instruction"] == "Pour the milk.":
            raise ValueError("no status in the outcome")
        return decide(record, policy)

    monkeypatch.setattr(gate_module, "_decision", unreadable)
    gate = make_gate("single", _clear)
    milk, door = await asyncio.gather(gate.check("Pour the milk.", wait=30), gate.check("Open the door.", wait=30))
    assert milk.status == "error" and "outcome could not be read: no status" in (milk.reason or "")
    assert door.status == "clear"
    kept = {e.spec["item"]["instruction"] for e in gate.store.episodes(gate.run_id)}
    assert kept == {"Pour the milk.", "Open the door."}, "the unreadable check's record is kept, to be looked at"
    row = records.get(gate.store, milk.gate_id)
    assert row is not None and row.status == "error"


async def test_a_caller_that_goes_away_never_takes_the_rows_write_with_it(
        make_gate: MakeGate, monkeypatch: pytest.MonkeyPatch) -> None:
    update = records.update

    def slow_update(*args: Any, **kwargs: Any) -> bool:  # a busy store: the asking state takes a while to land
        time.sleep(0.3)
        return update(*args, **kwargs)

    monkeypatch.setattr(records, "update", slow_update)
    gate = make_gate("single", {"agent": [proposal("ambiguous", "Which cup?")]})
    call = asyncio.create_task(gate.check("Bring me the cup."))
    for _ in range(250):
        await asyncio.sleep(0.02)
        if any(live.person.pending is not None for live in gate._live.values()):
            break
    [gate_id] = list(gate._live)
    await asyncio.sleep(0.05)  # the caller now waits for the row to say what it returns
    write = gate._live[gate_id].write
    assert write is not None and not write.done(), "the asking state is still on its way to the row"
    call.cancel()  # the pipeline's request is dropped
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.sleep(0.8)
    assert write.done() and not write.cancelled(), "the caller went away; the write did not go with it"
    row = records.get(gate.store, gate_id)
    assert row is not None and row.status == "ask", "the question's state reached the row"
    assert (await gate.get(gate_id)).question == "Which cup?"
