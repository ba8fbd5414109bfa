"""Faults caused for real by a misbehaving HTTP server on loopback."""

from __future__ import annotations

import asyncio
import time

import pytest

from lexicoord.errors import (
    ConfigError,
    ModelNotFoundError,
    ModelTimeoutError,
    ProviderHTTPError,
    ServerUnreachableError,
)
from lexicoord.models import get_model
from tests.conftest import free_port
from tests.models.fault_server import FaultServer, Reply, completion


def model_for(server: FaultServer, **options):
    return get_model("openai-compatible/fake-model", cache=False, base_url=server.base_url, **options)


async def test_429_then_200_waits_for_retry_after() -> None:
    def responder(n: int, _req: dict) -> Reply:
        if n == 0:
            return Reply(429, '{"error": {"message": "slow down"}}', {"Retry-After": "1", "Content-Type": "application/json"})
        return completion("fine")

    with FaultServer(responder) as server:
        model = model_for(server, backoff_initial=0.01, max_retries=3)
        out = await model.generate("hi")
    assert out.text == "fine"
    assert out.attempts == 2
    (t0, _), (t1, _) = server.requests
    assert t1 - t0 >= 0.95, "the retry must wait for the server's Retry-After"
    assert t1 - t0 < 5


async def test_500_forever_backs_off_then_gives_a_clear_error() -> None:
    with FaultServer(lambda n, r: Reply(500, '{"error": {"message": "boom"}}', {"Content-Type": "application/json"})) as server:
        model = model_for(server, max_retries=3, backoff_initial=0.1, backoff_max=2)
        with pytest.raises(ProviderHTTPError) as info:
            await model.generate("hi")
    assert len(server.requests) == 4
    message = str(info.value)
    assert "HTTP 500" in message and "boom" in message and "gave up after 4 attempts" in message
    gaps = [b[0] - a[0] for a, b in zip(server.requests, server.requests[1:])]
    # Exponential: each wait is at least the base doubling (0.1, 0.2, 0.4), jitter only adds.
    assert gaps[0] >= 0.09 and gaps[1] >= 0.19 and gaps[2] >= 0.39
    assert sum(gaps) < 5


async def test_hang_past_timeout_is_retried_then_reported() -> None:
    late = completion("late")
    late.delay = 3.0
    with FaultServer(lambda n, r: late) as server:
        model = model_for(server, timeout=0.3, max_retries=1, backoff_initial=0.01)
        started = time.monotonic()
        with pytest.raises(ModelTimeoutError) as info:
            await model.generate("hi")
        elapsed = time.monotonic() - started
    assert len(server.requests) == 2
    assert "did not answer within 0.3 s" in str(info.value)
    assert "gave up after 2 attempts" in str(info.value)
    assert elapsed < 2.5


async def test_html_error_page_is_described_not_dumped() -> None:
    page = "<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>"
    with FaultServer(lambda n, r: Reply(502, page, {"Content-Type": "text/html"})) as server:
        model = model_for(server, max_retries=1, backoff_initial=0.01)
        with pytest.raises(ProviderHTTPError) as info:
            await model.generate("hi")
    message = str(info.value)
    assert "HTML page (502 Bad Gateway)" in message
    assert "<html>" not in message


async def test_html_page_with_status_200_is_an_error_naming_the_server() -> None:
    with FaultServer(lambda n, r: Reply(200, "<html><title>Login</title></html>", {"Content-Type": "text/html"})) as server:
        model = model_for(server)
        with pytest.raises(ProviderHTTPError) as info:
            await model.generate("hi")
    assert server.base_url in str(info.value) and "HTML page (Login)" in str(info.value)


async def test_unreachable_server_names_the_url_and_variable() -> None:
    port = free_port()
    model = get_model("vllm/some-model", cache=False, base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_initial=0.01)
    with pytest.raises(ServerUnreachableError) as info:
        await model.generate("hi")
    assert f"127.0.0.1:{port}" in str(info.value) and "VLLM_BASE_URL" in str(info.value)


async def test_base_url_variable_overrides_the_preset(monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultServer(lambda n, r: completion("from env")) as server:
        monkeypatch.setenv("OLLAMA_BASE_URL", server.base_url)
        out = await get_model("ollama/llama3.2", cache=False).generate("hi")
    assert out.text == "from env"
    assert server.requests[0][1]["model"] == "llama3.2"


async def test_rejected_key_is_not_retried_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultServer(lambda n, r: Reply(401, '{"error": {"message": "bad key"}}', {"Content-Type": "application/json"})) as server:
        monkeypatch.setenv("GROQ_API_KEY", "wrong")
        model = get_model("groq/llama", cache=False, base_url=server.base_url)
        with pytest.raises(ConfigError) as info:
            await model.generate("hi")
    assert len(server.requests) == 1
    assert "GROQ_API_KEY" in str(info.value)


async def test_unknown_model_404_is_clear() -> None:
    with FaultServer(lambda n, r: Reply(404, '{"error": {"message": "model not found"}}', {"Content-Type": "application/json"})) as server:
        with pytest.raises(ModelNotFoundError, match="fake-model"):
            await model_for(server).generate("hi")


async def test_server_without_json_schema_support_falls_back_to_prompt_and_parsing() -> None:
    def responder(n: int, req: dict) -> Reply:
        if "response_format" in req:
            return Reply(400, '{"error": {"message": "response_format json_schema is not supported"}}')
        assert "JSON schema" in req["messages"][0]["content"]
        return completion('Sure! ```json\n{"choice": "river"}\n```')

    with FaultServer(responder) as server:
        model = model_for(server)
        out = await model.generate("which bank?", choices=("river", "money"))
        again = await model.generate("which bank?", choices=("river", "money"))
    assert out.choice == "river" and out.parse_error is None and again.choice == "river"
    forms = [r["response_format"]["type"] if "response_format" in r else "prompt" for _, r in server.requests]
    assert forms == ["json_schema", "json_object", "prompt", "prompt"], "it steps down once, then remembers"


async def test_request_carries_settings_and_schema() -> None:
    with FaultServer(lambda n, r: completion('{"choice": "money"}', 11, 4)) as server:
        out = await model_for(server).generate(
            "which bank?", choices=("river", "money"), temperature=0.5, max_tokens=33, seed=7, stop=("\n\n",)
        )
    sent = server.requests[0][1]
    assert sent["temperature"] == 0.5 and sent["max_tokens"] == 33 and sent["seed"] == 7 and sent["stop"] == ["\n\n"]
    assert sent["response_format"]["json_schema"]["schema"]["properties"]["choice"]["enum"] == ["river", "money"]
    assert out.choice == "money" and out.usage.prompt_tokens == 11 and out.usage.completion_tokens == 4


async def test_concurrent_calls_step_down_the_schema_form_once() -> None:
    def responder(n: int, req: dict) -> Reply:
        if "response_format" in req:
            return Reply(400, '{"error": {"message": "response_format is not supported"}}', delay=0.1)
        return completion('{"choice": "river"}')

    with FaultServer(responder) as server:
        model = model_for(server)
        outs = await asyncio.gather(*(model.generate("which?", choices=("river", "money")) for _ in range(4)))
    assert [o.choice for o in outs] == ["river"] * 4
    assert model.provider._schema_modes == ["prompt"]


async def test_cache_tells_servers_apart(tmp_path) -> None:
    from lexicoord.models import ResponseCache

    cache = ResponseCache(tmp_path / "c.db")
    with FaultServer(lambda n, r: completion("from A")) as a, FaultServer(lambda n, r: completion("from B")) as b:
        first = await get_model("vllm/m", cache=cache, base_url=a.base_url).generate("hi")
        second = await get_model("vllm/m", cache=cache, base_url=b.base_url).generate("hi")
        again = await get_model("vllm/m", cache=cache, base_url=a.base_url).generate("hi")
    assert (first.text, second.text, again.text) == ("from A", "from B", "from A")
    assert not second.cached and again.cached and len(b.requests) == 1


@pytest.mark.parametrize("url", ["127.0.0.1:11434", "ftp://example.org/v1", "http://[::1"])
def test_a_base_url_that_is_not_http_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="is not an http"):
        get_model("ollama/m", base_url=url)


def test_unknown_or_mistyped_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="does not take the option 'foo'"):
        get_model("ollama/m", foo="bar")
    with pytest.raises(ConfigError, match="timeout must be a number"):
        get_model("ollama/m", timeout="abc")


async def test_with_the_defaults_a_hung_server_costs_one_retry_of_its_timeout() -> None:
    late = completion("late")
    late.delay = 2.0
    with FaultServer(lambda n, r: late) as server:
        model = model_for(server, timeout=0.3, backoff_initial=0.01)  # every other setting at its default
        started = time.perf_counter()
        with pytest.raises(ModelTimeoutError, match="gave up after 2 attempts"):
            await model.generate("hi")
    assert len(server.requests) == 2, "a timeout is retried once, not max_retries times"
    assert time.perf_counter() - started < 1.5


async def test_with_the_defaults_a_failing_server_gives_up_within_seconds() -> None:
    with FaultServer(lambda n, r: Reply(500, '{"error": {"message": "boom"}}', {"Content-Type": "application/json"})) as server:
        model = model_for(server, backoff_initial=0.05)
        with pytest.raises(ProviderHTTPError, match="gave up after 4 attempts"):
            await model.generate("hi")
    assert len(server.requests) == 4
