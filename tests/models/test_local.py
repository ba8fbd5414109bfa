"""The embedded model, for real: llama.cpp generating with the bundled SmolLM2 GGUF."""

import asyncio

from jsonschema import validate

from lexicoord.models import get_model
from lexicoord.models.providers import local

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
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        for _ in range(20):
            ticks += 1
            await asyncio.sleep(0.01)

    await asyncio.gather(
        first.generate("Count to five.", max_tokens=20, seed=1),
        second.generate("Name a colour.", max_tokens=20, seed=1),
        heartbeat(),
    )
    assert len([k for k in local._loaded if k[0] == str(first.provider.path)]) == 1
    assert ticks == 20, "the event loop kept running while llama.cpp generated"
