"""The gate on real models: the embedded model generating in-process, and an OpenAI-compatible server on loopback.

A 135M model's verdicts are not what is checked (it is not a judge of clarity); what is checked is that whatever
it says, the verdict follows the policy's rule as the record shows it, nothing is ``clear`` without agreement,
and every call is in the record.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lexicoord.core.events import ChoiceEvent, RoundClosedEvent
from lexicoord.gate import Gate, Verdict
from lexicoord.models.observe import ModelCallEvent
from lexicoord.protocols.debate.replies import ProposalEvent

pytestmark = pytest.mark.embedded
LOCAL = "local/smollm2-135m"
SCENE = "A kitchen table with a red mug and a blue mug. A shelf above it."
CUPS = ["the red mug", "the blue mug"]


def recorded(gate: Gate, v: Verdict) -> list:
    [(record, events)] = [(r, e) for r, e in gate.store.iter_run_events(v.run_id) if r.key == v.episode_key]
    assert record.model_calls == v.model_calls == sum(isinstance(e, ModelCallEvent) for e in events)
    assert v.tokens == record.prompt_tokens + record.completion_tokens > 0
    return events


async def settle(gate: Gate, v: Verdict) -> Verdict:
    """Answer every question the way a person would, until the verdict is final."""
    while v.status == "ask":
        v = await gate.answer(v.gate_id, choice=v.options[0]) if v.options else \
            await gate.answer(v.gate_id, text="The blue mug, onto the shelf.")
    assert v.status in ("clear", "refuse", "error")
    assert (v.status in ("refuse", "error")) == bool(v.reason)
    return v


async def test_single_on_the_embedded_model(tmp_path: Path) -> None:
    async with Gate("single", [LOCAL], db=str(tmp_path / "g.db")) as gate:
        v = await settle(gate, await gate.check("Put the mug on the shelf.", context=SCENE))
        events = recorded(gate, v)
        proposals = [e for e in events if isinstance(e, ProposalEvent)]
        if v.clear:  # clear only when the last look's verdict said so
            assert proposals[-1].verdict == "clear"
        calls = [e for e in events if isinstance(e, ModelCallEvent)]
        assert "<<<INSTRUCTION\nPut the mug on the shelf.\nINSTRUCTION>>>" in calls[0].messages[-1].content


async def test_debate_on_the_embedded_model(tmp_path: Path) -> None:
    async with Gate("debate", [LOCAL], db=str(tmp_path / "g.db"), rounds=1, clarifications=0) as gate:
        v = await settle(gate, await gate.check("Put the mug on the shelf.", context=SCENE))
        events = recorded(gate, v)
        closed = [e for e in events if isinstance(e, RoundClosedEvent)]
        if v.clear:
            assert closed and closed[-1].summary["consensus"] is True
        assert v.model_calls >= 3  # a leader and two followers, each at least once


async def test_coalition_on_the_embedded_model(tmp_path: Path) -> None:
    async with Gate("coalition", [LOCAL], db=str(tmp_path / "g.db")) as gate:
        v = await settle(gate, await gate.check("Hand me the mug.", context=SCENE, candidates=CUPS))
        events = recorded(gate, v)
        last = max(e.round or 0 for e in events if isinstance(e, ChoiceEvent))
        chosen = {e.choice for e in events if isinstance(e, ChoiceEvent) and e.round == last}
        assert (v.clear and chosen == {v.interpretation}) or (not v.clear and len(chosen) != 1 or None in chosen)


async def test_adaptive_on_the_embedded_model(tmp_path: Path) -> None:
    async with Gate("adaptive", [LOCAL], db=str(tmp_path / "g.db"), rounds=1) as gate:
        v = await settle(gate, await gate.check("Put the mug on the shelf.", context=SCENE))
        recorded(gate, v)
        assert v.policy == "adaptive" and v.escalated is not None
        assert (v.model_calls <= 2) == (v.escalated is False)  # one look (a parse retry at most) unless escalated


async def test_single_through_an_openai_compatible_server(llama_server: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMACPP_BASE_URL", llama_server)
    async with Gate("single", ["llamacpp/smollm2"], db=str(tmp_path / "g.db")) as gate:
        v = await settle(gate, await gate.check("Put the mug on the shelf.", context=SCENE))
        events = recorded(gate, v)
        assert all(e.model.startswith("llamacpp/") for e in events if isinstance(e, ModelCallEvent))


def test_calibrate_then_a_conformal_check_with_real_log_probabilities(tmp_path: Path) -> None:
    import asyncio
    import json

    from typer.testing import CliRunner

    from lexicoord.cli.app import app
    from lexicoord.gate import read_settings
    from lexicoord.gate.events import ScoresEvent

    rows = [("Bring me something to eat.", ["an apple", "a hammer"], "an apple"),
            ("Hand me the tool for nails.", ["a hammer", "a pillow"], "a hammer"),
            ("I am thirsty, bring me something.", ["a glass of water", "a brick"], "a glass of water"),
            ("Give me something to write with.", ["a pencil", "a banana"], "a pencil"),
            ("Pass me something to sit on.", ["a chair", "a spoon"], "a chair"),
            ("Bring a blanket, I am cold.", ["a blanket", "an ice cube"], "a blanket")]
    data = tmp_path / "calibration.jsonl"
    data.write_text("".join(json.dumps({"instruction": i, "context": "A house.", "options": o, "answer": a}) + "\n"
                            for i, o, a in rows))
    out = tmp_path / "gate.toml"
    result = CliRunner().invoke(app, ["gate", "calibrate", str(data), "--model", LOCAL, "--success", "0.8",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    settings = read_settings(out)
    assert settings.policy == "conformal" and settings.qhat is not None and 0 <= settings.qhat <= 1
    assert settings.target_success == 0.8 and "6 calibration items" in result.output

    async def check() -> None:
        async with Gate(settings=settings, db=str(tmp_path / "g.db")) as gate:
            v = await settle(gate, await gate.check("Bring me something to eat.", context="A kitchen.",
                                                    candidates=["a sandwich", "a screwdriver", "a sock"]))
            events = recorded(gate, v)
            [scores] = [e for e in events if isinstance(e, ScoresEvent)][:1]
            assert sum(scores.probabilities.values()) == pytest.approx(1, abs=1e-4)
            assert scores.kept == [o for o in sorted(scores.probabilities, key=lambda o: -scores.probabilities[o])
                                   if 1 - scores.probabilities[o] <= settings.qhat]
            assert v.clear == (len(scores.kept) == 1) or v.clarifications  # clear by the set, or by the person

    asyncio.run(check())
