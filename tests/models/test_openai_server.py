"""The OpenAI-compatible provider against a real server on loopback (llama-cpp-python's own)."""

import pytest
from jsonschema import validate

from lexicoord.models import get_model

pytestmark = pytest.mark.embedded  # every test here runs the embedded model

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "sunny": {"type": "boolean"}},
    "required": ["city", "sunny"],
}


async def test_plain_completion_with_usage(llama_server: str) -> None:
    model = get_model("llamacpp/smollm2", cache=False, base_url=llama_server)
    out = await model.generate("Say hello.", max_tokens=16, temperature=0, seed=3)
    assert out.text.strip()
    assert out.usage.prompt_tokens and out.usage.completion_tokens and out.usage.completion_tokens <= 16
    assert out.model.startswith("llamacpp/")


async def test_json_schema_through_the_server(llama_server: str) -> None:
    model = get_model("llamacpp/smollm2", cache=False, base_url=llama_server)
    out = await model.generate("Describe the weather in Paris as JSON.", json_schema=SCHEMA, max_tokens=60, seed=1)
    assert out.parse_error is None, out.text
    validate(out.parsed, SCHEMA)


async def test_cache_hit_skips_the_server(llama_server: str, tmp_path) -> None:
    from lexicoord.models import ResponseCache

    model = get_model("llamacpp/smollm2", cache=ResponseCache(tmp_path / "c.db"), base_url=llama_server)
    first = await model.generate("Name a fruit.", max_tokens=8, seed=9)
    second = await model.generate("Name a fruit.", max_tokens=8, seed=9)
    assert not first.cached and second.cached and second.text == first.text
