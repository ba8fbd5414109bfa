"""The embedded model, for real: llama.cpp generating with the bundled SmolLM2 GGUF."""

import asyncio
import os
import time
from pathlib import Path

import pytest
from jsonschema import validate

from lexicoord.errors import ConfigError, ModelError, ModelTimeoutError
from lexicoord.models import get_model
from lexicoord.models.provider import calls_at_once
from lexicoord.models.providers import cores as cores_module
from lexicoord.models.providers import local
from lexicoord.models.types import assistant, user

pytestmark = pytest.mark.embedded  # every test here runs the embedded model

SCHEMA = {
    "type": "object",
    "properties": {
        "choice": {"type": "string", "enum": ["the land alongside a river", "a financial institution"]},
        "justification": {"type": "string", "maxLength": 200},
    },
    "required": ["choice", "justification"],
    "additionalProperties": False,
}


async def test_embedded_model_generates_text() -> None:
    model = get_model("local/smollm2-135m", cache=False)
    out = await model.generate("Write one sentence about rivers.", max_tokens=30, temperature=0, seed=1)
    assert out.text.strip(), "the model produced no text"
    assert out.usage.prompt_tokens and out.usage.prompt_tokens > 5
    assert 0 < out.usage.completion_tokens <= 30
    assert out.model == "local/smollm2-135m" and out.latency > 0 and not out.cached


async def test_embedded_model_answers_a_schema_with_valid_json() -> None:
    model = get_model("local/smollm2-135m", cache=False)
    prompt = 'In "I sat on the bank and fished", what does bank mean? Answer in JSON.'
    for seed in (1, 2, 3):
        out = await model.generate(prompt, json_schema=SCHEMA, max_tokens=150, temperature=0.7, seed=seed)
        assert out.parse_error is None, out.text
        validate(out.parsed, SCHEMA)


async def test_embedded_choices_and_seed_reproducibility() -> None:
    model = get_model("local/smollm2-135m", cache=False)
    a = await model.generate("Sky colour?", choices=("red", "blue", "green"), temperature=0.9, seed=42, max_tokens=20)
    b = await model.generate("Sky colour?", choices=("red", "blue", "green"), temperature=0.9, seed=42, max_tokens=20)
    assert a.choice in {"red", "blue", "green"} and a.choice == b.choice and a.text == b.text


async def test_one_loaded_model_is_shared_and_calls_run_off_the_loop() -> None:
    first = get_model("local/smollm2-135m", cache=False)
    second = get_model("local/smollm2-135m", cache=False)
    await first.generate("warm up", max_tokens=2)
    loaded_before = dict(local._loaded)
    gaps: list[float] = []
    generating = True

    async def heartbeat() -> None:
        last = time.perf_counter()
        while generating:
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    async def both() -> None:
        nonlocal generating
        await asyncio.gather(
            first.generate("Count from one to fifty in words.", max_tokens=160, seed=1),
            second.generate("Name twenty colours, one a line.", max_tokens=160, seed=1),
        )
        generating = False

    started = time.perf_counter()
    await asyncio.gather(both(), heartbeat())
    assert time.perf_counter() - started > 0.5, "generation too short to tell"
    assert max(gaps) < 0.25, f"the event loop stalled for {max(gaps):.2f} s while llama.cpp generated"
    assert local._loaded == loaded_before, "the second model loaded the weights again"


async def test_a_timed_out_generation_is_not_retried_and_holds_the_model_until_it_ends() -> None:
    model = get_model("local/smollm2-135m", cache=False)
    await model.generate("warm up", max_tokens=2)
    started = time.perf_counter()
    with pytest.raises(ModelTimeoutError, match="did not answer within 0.05 s") as info:
        await model.generate("Write a long story about a robot.", max_tokens=120, timeout=0.05, max_retries=3)
    assert time.perf_counter() - started < 1.0, "the caller is freed at the timeout"
    assert info.value.attempts == 1, "an in-process model that is still busy is not retried"
    out = await model.generate("Say yes.", max_tokens=4, seed=2)
    assert out.text.strip()


async def test_a_prompt_longer_than_the_context_is_a_clear_error() -> None:
    model = get_model("local/smollm2-135m", cache=False, n_ctx=256)
    with pytest.raises(ModelError, match=r"n_ctx=\.\.\. \(now 256\)"):
        await model.generate("word " * 600, max_tokens=4)


async def test_prompt_prefix_reuse_restores_an_earlier_conversation_and_keeps_the_answer() -> None:
    """``ram`` resumes a conversation after another prompt ran in between; ``off`` and ``ram`` agree."""
    head = "Scene: nine blocks and three bowls on a table. " * 20
    first = [user(head + "Is 'put a few blocks in the bowl' clear? Answer yes or no.")]
    other = [user("Name a colour. " * 30)]
    answers = {}
    for mode in ("off", "ram"):
        model = get_model("local/smollm2-135m", cache=False, prompt_cache=mode)
        for loaded in local._loaded.values():  # as if loaded now: an earlier test's prefix cache left on no context
            loaded.ram_cache = None
            for context in loaded.contexts:
                context.llama.cache = None
        await model.generate(first, max_tokens=4, temperature=0, seed=1)
        await model.generate(other, max_tokens=4, temperature=0, seed=1)
        again = [*first, assistant("yes"), user("Why? One sentence.")]
        out = await model.generate(again, max_tokens=12, temperature=0, seed=1)
        answers[mode] = out.text
        loaded = local.load(local.resolve_path("smollm2-135m"))
        if mode == "ram":
            states = loaded.ram_cache.cache_state
            assert len(states) == 3, "the state after every call is kept, in one cache the contexts share"
            longest = max(len(k) for k in states)
            assert longest >= out.usage.prompt_tokens, "the resumed conversation is cached with its answer"
        else:
            assert loaded.ram_cache is None and all(c.llama.cache is None for c in loaded.contexts)
    assert answers["off"] == answers["ram"], "reusing a prefix does not change greedy output"


def test_a_bad_prompt_cache_setting_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="prompt_cache must be one of ram, context, off"):
        get_model("local/smollm2-135m", prompt_cache="disk")
    with pytest.raises(ConfigError, match="prompt_cache_mb"):
        get_model("local/smollm2-135m", prompt_cache_mb=0)


def test_a_bad_contexts_setting_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="contexts must be a whole number from 1 to 64"):
        get_model("local/smollm2-135m", contexts=0)


async def spans_of_calls_at_once(contexts: int, monkeypatch: pytest.MonkeyPatch, prompts: list[str],
                                 threads: list[int] | None = None, n_threads: int | None = None,
                                 **settings: object) -> tuple[list[tuple[float, float, int]], list]:
    """Generate ``prompts`` at once; each call's (start, end, context) as its thread ran it, and the outputs
    (and into ``threads``, the llama.cpp threads each call ran on)."""
    spans: list[tuple[float, float, int]] = []
    real = local.LocalProvider._complete

    def timed(self, loaded, context, messages, config, n_threads):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return real(self, loaded, context, messages, config, n_threads)
        finally:
            spans.append((started, time.perf_counter(), loaded.contexts.index(context)))
            if threads is not None:
                threads.append(context.threads)

    monkeypatch.setattr(local.LocalProvider, "_complete", timed)
    model = get_model("local/smollm2-135m", cache=False, contexts=contexts,
                      **({"n_threads": n_threads} if n_threads else {}))
    assert model.max_concurrency == contexts, "as many calls at once as there are contexts"
    await model.generate("warm up", max_tokens=2)
    spans.clear()
    if threads is not None:
        threads.clear()
    outs = await asyncio.gather(*(model.generate(p, **settings) for p in prompts))
    return spans, outs


def overlapping(spans: list[tuple[float, float, int]]) -> bool:
    ordered = sorted(spans)
    return any(later[0] < earlier[1] for earlier, later in zip(ordered, ordered[1:]))


async def test_calls_made_at_once_run_at_once_on_different_contexts(monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = ["Name five rivers.", "Name five mountains.", "Name five birds.", "Name five trees."]
    spans, _ = await spans_of_calls_at_once(2, monkeypatch, prompts, max_tokens=24, temperature=0, seed=1)
    assert len(spans) == 4 and {c for _, _, c in spans} == {0, 1}
    assert overlapping(spans), "two contexts generated at the same time"
    for ctx in (0, 1):
        assert not overlapping([s for s in spans if s[2] == ctx]), "one context serves one call at a time"
    spans, _ = await spans_of_calls_at_once(1, monkeypatch, prompts, max_tokens=24, temperature=0, seed=1)
    assert len(spans) == 4 and not overlapping(spans), "one context: one call at a time"


async def test_a_greedy_answer_is_the_same_whichever_context_gives_it(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = "Write one sentence about a robot that sorts blocks."
    spans, outs = await spans_of_calls_at_once(2, monkeypatch, [prompt, prompt], max_tokens=40, temperature=0, seed=3)
    assert {c for _, _, c in spans} == {0, 1}, "the two calls went to different contexts"
    assert outs[0].text == outs[1].text and outs[0].text.strip()


async def test_schema_answers_stay_valid_when_contexts_generate_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    prompt = 'In "I sat on the bank and fished", what does bank mean? Answer in JSON.'
    spans, outs = await spans_of_calls_at_once(2, monkeypatch, [prompt] * 4, json_schema=SCHEMA, max_tokens=150,
                                               temperature=0.7, seed=5)
    assert overlapping(spans)
    for out in outs:
        assert out.parse_error is None, out.text
        validate(out.parsed, SCHEMA)


async def test_a_timed_out_generation_keeps_its_context_taken_and_the_next_call_goes_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """llama.cpp cannot be interrupted: the abandoned generation runs on, so with two contexts the next call
    is served by the other one at the same time, and with one it waits until the abandoned one has ended."""
    for contexts in (2, 1):
        spans, _ = await spans_of_calls_at_once(contexts, monkeypatch, [])
        with pytest.raises(ModelTimeoutError):
            await get_model("local/smollm2-135m", cache=False, contexts=contexts).generate(
                "Write a long story about a robot.", max_tokens=120, timeout=0.05)
        out = await get_model("local/smollm2-135m", cache=False, contexts=contexts).generate("Say yes.", max_tokens=4)
        assert out.text.strip()
        while len(spans) < 2:  # the abandoned call's thread records its span when it really ends
            await asyncio.sleep(0.05)
        abandoned, after = sorted(spans)
        if contexts == 2:
            assert after[2] != abandoned[2] and after[0] < abandoned[1], "served beside the abandoned generation"
        else:
            assert after[0] >= abandoned[1], "one context: the next call waits for the abandoned one to end"


async def test_every_prompt_cache_mode_gives_the_same_greedy_answers_with_calls_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = ["Name three rivers.", "Name three rivers and a lake.", "Name three rivers.", "Name a lake."]
    answers = {}
    for mode in ("off", "context", "ram"):
        model = get_model("local/smollm2-135m", cache=False, contexts=2, prompt_cache=mode)
        outs = await asyncio.gather(*(model.generate(p, max_tokens=16, temperature=0, seed=1) for p in prompts))
        answers[mode] = [o.text for o in outs]
        assert answers[mode][0] == answers[mode][2]
    assert answers["off"] == answers["context"] == answers["ram"]


async def test_the_shared_ram_cache_keeps_states_without_the_unused_logits_table() -> None:
    """An entry holds the model state and the token ids, not llama-cpp-python's unwritten score rows (up to
    100 MB each), so the bound holds many more conversations."""
    model = get_model("local/smollm2-135m", cache=False, contexts=2, prompt_cache="ram")
    loaded = local.load(local.resolve_path("smollm2-135m"), contexts=2)
    loaded.ram_cache = None
    await asyncio.gather(*(model.generate(f"Describe a {thing} in two sentences.", max_tokens=20, temperature=0,
                                          seed=1) for thing in ("river", "bank", "robot")))
    states = list(loaded.ram_cache.cache_state.values())
    assert len(states) == 3
    assert all(len(state.scores) <= 1 for state in states)
    assert loaded.ram_cache.cache_size < 3 * 20 << 20


def test_the_default_number_of_contexts_follows_the_cores_and_the_model_size(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    small, large = tmp_path / "small.gguf", tmp_path / "large.gguf"
    small.write_bytes(b"GGUF")
    with large.open("wb") as f:
        f.write(local.GGUF_MAGIC)  # a GGUF's signature, then nothing: sparse, no disk used
        f.truncate(local.SMALL_MODEL_BYTES + 1)
    for cores, expected in ((1, 2), (2, 4), (8, 4)):
        monkeypatch.setattr(local, "usable_cores", lambda cores=cores: cores)
        assert local.default_contexts(small) == expected
        assert local.default_contexts(small, n_threads=1) == expected
        assert local.default_contexts(large) == 1
        assert local.LocalProvider(str(large)).default_concurrency == 1
    # contexts of several threads each stay within the cores
    assert local.default_contexts(small, n_threads=2) == 4 and local.default_contexts(small, n_threads=4) == 2
    assert local.default_contexts(small, n_threads=16) == 1
    monkeypatch.setattr(local, "usable_cores", lambda: 2)
    assert local.LocalProvider(str(small), n_threads=2).default_concurrency == 1


@pytest.mark.parametrize("value", [0, 65, "two"])
def test_a_bad_contexts_option_is_a_clear_error(value: object) -> None:
    with pytest.raises(ConfigError, match="contexts"):
        get_model("local/smollm2-135m", contexts=value)


async def test_contexts_are_made_as_calls_at_once_need_them_up_to_the_setting() -> None:
    """A one-shot call waits for one context, not for all: the others are made when calls at once need them."""
    model = get_model("local/smollm2-135m", cache=False, contexts=3, n_ctx=1024)
    await model.generate("Say yes.", max_tokens=2)
    loaded = local.load(local.resolve_path("smollm2-135m"), n_ctx=1024, contexts=3)
    assert len(loaded.contexts) == 1
    await model.generate("Say no.", max_tokens=2)
    assert len(loaded.contexts) == 1, "calls one after another share the one context"
    await asyncio.gather(*(model.generate(f"Count to {k}.", max_tokens=8) for k in (2, 3)))
    assert len(loaded.contexts) == 2
    outs = await asyncio.gather(*(model.generate(f"Name {k} colours.", max_tokens=8) for k in range(2, 8)))
    assert len(loaded.contexts) == 3, "never more than the setting"
    assert all(o.text.strip() for o in outs)


async def test_on_a_quiet_machine_a_lone_call_runs_on_every_core_and_calls_at_once_share_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cores_module, "busy_elsewhere", lambda: 0)  # nothing else runs (tests/models/test_cores.py)
    cores = cores_module.usable_cores()
    alone: list[int] = []
    await spans_of_calls_at_once(2, monkeypatch, ["Say yes."], threads=alone, max_tokens=4)
    assert alone == [cores]
    together: list[int] = []
    spans, _ = await spans_of_calls_at_once(2, monkeypatch, ["Count to ten.", "Name three colours."],
                                            threads=together, max_tokens=24)
    assert overlapping(spans) and sorted(together) == [max(1, cores // 2)] * 2


@pytest.mark.parametrize(("at_once", "contexts", "shares"), [(2, 2, 2), (4, 2, 2), (3, 1, 1), (1, 2, 1)])
async def test_a_call_shares_the_cores_with_the_calls_its_run_says_will_join_it(
        monkeypatch: pytest.MonkeyPatch, at_once: int, contexts: int, shares: int) -> None:
    monkeypatch.setattr(cores_module, "busy_elsewhere", lambda: 0)
    cores = cores_module.usable_cores()
    used: list[int] = []
    token = calls_at_once.set(at_once)
    try:
        await spans_of_calls_at_once(contexts, monkeypatch, ["Say yes."], threads=used, max_tokens=4)
    finally:
        calls_at_once.reset(token)
    assert used == [max(1, cores // shares)], "alone for now, sized for the calls at once it will have (at most the contexts)"


async def test_threads_given_are_the_threads_of_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[int] = []
    await spans_of_calls_at_once(1, monkeypatch, ["Say yes."], threads=used, n_threads=1, max_tokens=4)
    assert used == [1], "one call alone, on the one thread it was given"


async def test_what_the_process_prints_while_contexts_are_made_is_kept(capfd: pytest.CaptureFixture[str]) -> None:
    """Contexts are made while other calls run and the terminal draws: nothing printed meanwhile, on the
    process's own file descriptors, may go to /dev/null (llama-cpp-python's quiet loading did that)."""
    model = get_model("local/smollm2-135m", cache=False, contexts=4, n_ctx=512)
    printing = True

    async def ticks() -> int:
        n = 0
        while printing:
            os.write(1, f"tick {n}\n".encode())
            os.write(2, f"tock {n}\n".encode())
            n += 1
            await asyncio.sleep(0.002)
        return n

    async def calls() -> None:
        nonlocal printing
        await asyncio.gather(*(model.generate(f"Name {k} animals.", max_tokens=6) for k in range(2, 10)))
        printing = False

    _, n = await asyncio.gather(calls(), ticks())
    out, err = capfd.readouterr()
    assert n > 20 and len(local.load(local.resolve_path("smollm2-135m"), n_ctx=512, contexts=4).contexts) == 4
    assert out.splitlines() == [f"tick {k}" for k in range(n)]
    assert err.splitlines() == [f"tock {k}" for k in range(n)]


async def test_a_loaded_model_prepares_each_call_without_a_hop_to_a_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls made at once must reach their contexts in one turn of the loop (their thread counts depend on it): a
    thread hop per call would let a busy machine decide which arrives first."""
    model = get_model("local/smollm2-135m", cache=False)
    await model.generate("warm up", max_tokens=2)
    hops: list[object] = []
    real = asyncio.to_thread

    def counted(func, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        hops.append(func)
        return real(func, *args, **kwargs)

    monkeypatch.setattr(local.asyncio, "to_thread", counted)
    await model.provider.prepare()
    assert hops == []
    local._free_all()  # unloaded: the next prepare loads, off the event loop
    await model.provider.prepare()
    assert hops == [local.load]
