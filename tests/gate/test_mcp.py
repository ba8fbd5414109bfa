"""``lexicoord mcp`` as a coding agent meets it: the MCP SDK's own client, over stdio, against the command run
in a subprocess (tests/gate/mcp_scripted.py: a scripted model, a SQLite file of the test's own).

The scripted model finds "Open the door." clear, and "Bring me the cup." ambiguous ("Which cup?") until the
person has answered.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext, ElicitationFnT
from mcp.types import CallToolResult, ElicitRequestParams, ElicitResult, TextResourceContents

from lexicoord.errors import ConfigError
from lexicoord.gate import Gate, Verdict
from lexicoord.gate.settings import settings_from as gate_settings
from tests.conftest import free_port
from tests.gate.conftest import scripted
from tests.gate.mcp_scripted import QUESTION, reply

SERVER = Path(__file__).with_name("mcp_scripted.py")
CUP = "Bring me the cup."
CUPS = ["the red cup", "the blue cup"]


def server(tmp_path: Path, *options: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=[str(SERVER), "--db", str(tmp_path / "gate.db"), *options],
                                 env=dict(os.environ), cwd=str(tmp_path))


@asynccontextmanager
async def connected(tmp_path: Path, elicitation: ElicitationFnT | None = None,
                    *options: str) -> AsyncIterator[ClientSession]:
    """A session with the server; ``elicitation`` makes the client declare it can elicit a form."""
    with (tmp_path / "server.log").open("w") as errlog:
        async with (stdio_client(server(tmp_path, *options), errlog=errlog) as (read, write),
                    ClientSession(read, write, elicitation_callback=elicitation, read_timeout_seconds=60) as session):
            await session.initialize()
            yield session


class Person:
    """An elicitation callback: records each question, and answers with ``action`` and ``content`` (after
    ``slow`` seconds)."""

    def __init__(self, action: str, content: dict[str, Any] | None = None, slow: float = 0.0) -> None:
        self.action, self.content, self.slow = action, content, slow
        self.asked: list[ElicitRequestParams] = []

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params)
        await asyncio.sleep(self.slow)
        return ElicitResult(action=self.action, content=self.content)


def verdict(result: CallToolResult) -> Verdict:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return Verdict.model_validate(result.structured_content)


def error(result: CallToolResult) -> str:
    assert result.is_error and not result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)


async def test_the_tools_give_the_verdict_s_schema_and_their_annotations(tmp_path: Path) -> None:
    async with connected(tmp_path) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        templates = (await session.list_resource_templates()).resource_templates
    assert set(tools) == {"check_instruction", "answer_clarification"}
    for tool in tools.values():
        assert tool.output_schema is not None
        assert set(tool.output_schema["properties"]) == set(Verdict.model_json_schema()["properties"])
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is False and tool.annotations.destructive_hint is False
        assert tool.annotations.idempotent_hint is True and tool.annotations.open_world_hint is False
        assert "clear" in (tool.description or "")
    check = tools["check_instruction"].input_schema
    assert check["required"] == ["instruction"] and {"context", "candidates", "key"} <= set(check["properties"])
    assert "ctx" not in check["properties"]
    assert {"gate_id", "choice", "text", "refuse", "question"} == set(tools["answer_clarification"].input_schema["properties"])
    assert [(t.uri_template, t.mime_type) for t in templates] == [("gate://{gate_id}", "application/json")]


async def test_a_clear_instruction_is_clear(tmp_path: Path) -> None:
    async with connected(tmp_path) as session:
        said = verdict(await session.call_tool("check_instruction", {"instruction": "Open the door.",
                                                                     "context": "A hallway."}))
    assert said.status == "clear" and said.interpretation == "Open the door." and said.policy == "single"
    assert said.model_calls == 1


async def test_without_elicitation_the_agent_relays_the_question_then_answers(tmp_path: Path) -> None:
    async with connected(tmp_path) as session:
        asked = verdict(await session.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS,
                                                                      "key": "step-1"}))
        assert asked.status == "ask" and asked.question == QUESTION and asked.options == CUPS
        again = verdict(await session.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS,
                                                                      "key": "step-1"}))
        assert (again.gate_id, again.status) == (asked.gate_id, "ask")  # the same key is the same check
        done = verdict(await session.call_tool("answer_clarification", {"gate_id": asked.gate_id,
                                                                        "choice": "the blue cup"}))
    assert done.status == "clear" and done.gate_id == asked.gate_id
    assert done.interpretation is not None and "the blue cup" in done.interpretation
    assert [(c.question, c.choice) for c in done.clarifications] == [(QUESTION, "the blue cup")]


async def test_a_client_that_elicits_gets_the_final_verdict_in_one_call(tmp_path: Path) -> None:
    person = Person("accept", {"choice": "the blue cup", "text": "the one by the sink"})
    async with connected(tmp_path, elicitation=person) as session:
        said = verdict(await session.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS}))
    assert said.status == "clear" and said.interpretation is not None and "the blue cup" in said.interpretation
    assert [(c.choice, c.text) for c in said.clarifications] == [("the blue cup", "the one by the sink")]
    [params] = person.asked
    assert QUESTION in params.message and CUP in params.message
    form = params.requested_schema["properties"]
    assert form["choice"]["enum"] == CUPS and form["text"]["type"] == "string"


async def test_a_question_without_options_elicits_a_free_text(tmp_path: Path) -> None:
    person = Person("accept", {"text": "the blue one"})
    async with connected(tmp_path, elicitation=person) as session:
        said = verdict(await session.call_tool("check_instruction", {"instruction": CUP}))
    assert said.status == "clear" and [c.text for c in said.clarifications] == ["the blue one"]
    [params] = person.asked
    assert set(params.requested_schema["properties"]) == {"text"} and params.requested_schema["required"] == ["text"]


async def test_a_declined_question_refuses(tmp_path: Path) -> None:
    person = Person("decline")
    async with connected(tmp_path, elicitation=person) as session:
        said = verdict(await session.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS}))
    assert said.status == "refuse" and said.reason and len(person.asked) == 1
    assert [c.refused for c in said.clarifications] == [True]


async def test_a_cancelled_question_is_left_to_the_agent(tmp_path: Path) -> None:
    person = Person("cancel")
    async with connected(tmp_path, elicitation=person) as session:
        asked = verdict(await session.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS}))
        assert asked.status == "ask" and asked.question == QUESTION and len(person.asked) == 1
        done = verdict(await session.call_tool("answer_clarification", {"gate_id": asked.gate_id,
                                                                        "text": "the red one"}))
    assert done.status == "clear" and [c.text for c in done.clarifications] == ["the red one"]


async def test_a_person_who_does_not_answer_in_time_is_a_refusal_not_a_hung_call(tmp_path: Path) -> None:
    (tmp_path / "gate.toml").write_text("person_timeout = 1.0\n")
    person = Person("accept", {"choice": "the blue cup"}, slow=60)
    async with connected(tmp_path, person, "--config", str(tmp_path / "gate.toml")) as session:
        with anyio.fail_after(20):
            said = verdict(await session.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS}))
    assert said.status == "refuse" and said.reason and len(person.asked) == 1


async def test_the_gate_resource_is_the_verdict(tmp_path: Path) -> None:
    async with connected(tmp_path) as session:
        asked = verdict(await session.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS}))
        read = await session.read_resource(f"gate://{asked.gate_id}")
        await session.call_tool("answer_clarification", {"gate_id": asked.gate_id, "refuse": True})
        after = await session.read_resource(f"gate://{asked.gate_id}")
        with pytest.raises(MCPError, match="No gate"):
            await session.read_resource("gate://0123456789abcdef")
    [content] = read.contents
    assert isinstance(content, TextResourceContents) and content.mime_type == "application/json"
    stored = Verdict.model_validate_json(content.text)
    assert (stored.gate_id, stored.status, stored.question, stored.options) == (asked.gate_id, "ask", QUESTION, CUPS)
    [content] = after.contents
    assert isinstance(content, TextResourceContents) and Verdict.model_validate_json(content.text).status == "refuse"


async def test_what_the_gate_refuses_is_a_tool_error_never_a_verdict(tmp_path: Path) -> None:
    async with connected(tmp_path) as session:
        empty = error(await session.call_tool("check_instruction", {"instruction": ""}))
        blank = error(await session.call_tool("check_instruction", {"instruction": "  \n "}))
        unknown = error(await session.call_tool("answer_clarification", {"gate_id": "nope", "text": "the red one"}))
        settled = verdict(await session.call_tool("check_instruction", {"instruction": "Open the door.", "key": "k"}))
        reused = error(await session.call_tool("check_instruction", {"instruction": "Close the door.", "key": "k"}))
        too_late = error(await session.call_tool("answer_clarification", {"gate_id": settled.gate_id, "text": "x"}))
        nothing = error(await session.call_tool("answer_clarification", {"gate_id": settled.gate_id}))
    assert "instruction" in empty and "empty" in blank and "No gate 'nope'" in unknown
    assert "another request" in reused and "asks nothing" in too_late and "needs a choice, a text, or refuse" in nothing
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log  # refusals are the gate's sentences, not crashes


async def test_a_2026_client_elicits_through_input_required(tmp_path: Path) -> None:
    """The SDK's high-level client negotiates the 2026-07-28 revision, where the question comes back as an
    ``input_required`` result and the client calls again with the answer; still one call for the agent."""
    person = Person("accept", {"choice": "the red cup"})
    async with Client(server(tmp_path), elicitation_callback=person) as client:
        assert client.protocol_version == "2026-07-28"
        said = verdict(await client.call_tool("check_instruction", {"instruction": CUP, "candidates": CUPS}))
        person.action = "cancel"  # asked once, then the question is the agent's to relay
        left = verdict(await client.call_tool("check_instruction", {"instruction": CUP, "context": "A kitchen."}))
    assert said.status == "clear" and [c.choice for c in said.clarifications] == ["the red cup"]
    assert person.asked[0].requested_schema["properties"]["choice"]["enum"] == CUPS
    assert left.status == "ask" and left.question == QUESTION and len(person.asked) == 2


async def test_serve_mounts_mcp_over_streamable_http_behind_the_gate_key(tmp_path: Path) -> None:
    """What ``lexicoord serve`` does: the gate's part mounts the SDK's streamable-HTTP app at ``/mcp``, runs its
    lifespan, and keeps it behind the gate's key; here under uvicorn on loopback, with the SDK's own client."""
    import httpx
    import httpx2
    import uvicorn
    from fastapi import FastAPI
    from mcp.client.streamable_http import streamable_http_client

    from lexicoord.gate.http import GatePart

    port = free_port()
    part = GatePart(Gate("single", [scripted(reply)], db=str(tmp_path / "gate.db")), key="sesame")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await part.start()
        try:
            yield
        finally:
            await part.stop()

    web_app = FastAPI(lifespan=lifespan)
    part.mount(web_app, None)
    web = uvicorn.Server(uvicorn.Config(web_app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.create_task(web.serve())
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        while not web.started:
            assert not serving.done(), serving.exception()
            await asyncio.sleep(0.02)
        async with httpx.AsyncClient() as plain:
            assert (await plain.post(url + "/", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})).status_code == 401
        keyed = httpx2.AsyncClient(headers={"Authorization": "Bearer sesame"}, timeout=30)
        async with Client(streamable_http_client(url, http_client=keyed), elicitation_callback=Person("decline")) as client:
            said = verdict(await client.call_tool("check_instruction", {"instruction": CUP}))
            clear = verdict(await client.call_tool("check_instruction", {"instruction": "Open the door."}))
    finally:
        web.should_exit = True
        await serving
    assert said.status == "refuse" and [c.refused for c in said.clarifications] == [True]
    assert clear.status == "clear"


def test_the_command_s_settings_are_the_file_s_with_the_options_over_them(tmp_path: Path) -> None:
    config = tmp_path / "gate.toml"
    config.write_text('[gate]\npolicy = "debate"\nmodels = ["scripted/a", "scripted/b"]\nrounds = 2\n')
    settings = gate_settings(config, "single", None)
    assert (settings.policy, settings.models, settings.rounds) == ("single", ["scripted/a", "scripted/b"], 2)
    assert gate_settings(None, None, ["scripted/c"]).models == ["scripted/c"]
    with pytest.raises(ConfigError, match="policy"):
        gate_settings(config, "unanimous", None)
    with pytest.raises(ConfigError, match="threshold"):
        gate_settings(None, "conformal", None)
