"""The gate as an MCP server: a coding agent checks an instruction before acting on it, and acts only on ``clear``.

Built on the official SDK's ``MCPServer`` (``mcp`` 2.x) around one :class:`Gate`:

* ``check_instruction`` and ``answer_clarification``: tools whose structured output is the :class:`Verdict`
  (the tools' ``outputSchema`` is the Verdict's JSON schema), so the agent branches on ``status``;
* ``gate://{gate_id}``: a resource template, the verdict of a check as it stands (JSON);
* elicitation: when a check asks (``ask``) and the client declared it can elicit a form, the question goes to
  the person through the client right away (the options as an enum, plus a free text), their answer goes to
  the gate, and the tool returns what the gate then says, in the same call. Declining refuses; cancelling
  returns the ``ask`` verdict as it is, so the agent relays the question itself. A client that cannot elicit
  gets the ``ask`` verdict: it relays ``question`` and calls ``answer_clarification``.

Elicitation rides whichever channel the negotiated protocol has: a request to the client in the middle of the
call (the ``initialize`` handshake era, up to 2025-11-25), or an ``input_required`` result the client answers by
calling the tool again (2026-07-28, where the gate's id travels in the sealed ``requestState``).

A gate error (bad input, unknown gate, a key reused, an answer that does not fit) is a tool error carrying the
gate's sentence, never a verdict, let alone ``clear``. The SDK is imported here only: ``lexicoord mcp`` imports
this module when it runs, and the web server when it mounts :func:`streamable_http_app`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from mcp.types.version import is_version_at_least
from pydantic import Field
from starlette.applications import Starlette

from lexicoord import __version__
from lexicoord.errors import LexicoordError
from lexicoord.gate.deliberation import MAX_ANSWER
from lexicoord.gate.gate import Gate, UnknownGate
from lexicoord.gate.verdict import Verdict

log = logging.getLogger(__name__)

NAME = "lexicoord-gate"
#: The first protocol revision that elicits through an ``input_required`` result rather than a request
#: sent to the client in the middle of the call.
INPUT_REQUIRED_VERSION = "2026-07-28"
#: The key of the gate's question among an ``input_required`` result's requests.
CLARIFY = "clarify"
#: Seconds past a question's expiry an elicitation is still waited for (the gate's refusal lands meanwhile).
GRACE = 2.0

INSTRUCTIONS = """\
An agreement gate: before acting on an instruction that could be read more than one way, call \
check_instruction with it (and what you know of the situation as context). Act only when status is "clear", \
and then on the verdict's interpretation. On "ask", put the question (and its options) to the user and send \
their answer with answer_clarification. On "refuse" or "error", do not act; tell the user the reason."""

CHECK = """\
Ask the agreement gate whether an instruction is clear enough to act on. Act only when status is "clear" \
(then follow interpretation). "ask": relay question (and options, if any) to the user, then call \
answer_clarification with gate_id and their answer. "refuse" or "error": do not act; tell the user reason. \
Give a key (a task or step id) so that a retry returns the same check instead of starting a second one."""

ANSWER = """\
Send the user's answer to an "ask" verdict's question: choice (one of the verdict's options), text (their \
own words), or both; or refuse=true when the user declines to clarify (the gate then refuses). Returns the \
new verdict: act only when its status is "clear". The same answer sent twice counts once."""

# The tools' arguments, as the agent reads them in their input schemas.
Instruction = Annotated[str, Field(description="The instruction to check, as the user gave it.")]
Situation = Annotated[str, Field(description="What the agent knows of the situation: the task, the files or "
                                             "objects at hand, what the user said before.")]
Candidates = Annotated[list[str] | None, Field(description="The readings of the instruction the agent sees "
                                                           "(2 to 8), if any; the gate's question offers them.")]
Key = Annotated[str | None, Field(description="A name for this check (a task or step id): the same key with "
                                              "the same instruction returns the same check, never a second one.")]
GateId = Annotated[str, Field(description="The gate_id of the verdict whose question the user answered.")]
Asked = Annotated[int | None, Field(default=None, ge=1, description="The verdict's asked (the question's number): "
                                    "the answer then counts for that question only, and a retry counts once.")]
Choice = Annotated[str | None, Field(description="The option the user chose (one of the verdict's options).")]
Text = Annotated[str | None, Field(description="The user's answer in their own words.")]
Refuse = Annotated[bool, Field(description="The user declines to clarify: the gate refuses.")]

#: Neither tool changes anything outside the gate's own records, and calling again with the same key (or the
#: same answer) returns the same verdict.
CHECK_ANNOTATIONS = ToolAnnotations(title="Check an instruction before acting", read_only_hint=False,
                                    destructive_hint=False, idempotent_hint=True, open_world_hint=False)
ANSWER_ANNOTATIONS = ToolAnnotations(title="Answer the gate's question", read_only_hint=False,
                                     destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def build_server(gate: Gate) -> MCPServer:
    """The MCP server for ``gate`` (opened and closed by the caller: ``async with gate: ...``)."""
    # The sealed requestState must outlive the person's time to answer (the SDK's default is 10 minutes).
    security = RequestStateSecurity.ephemeral(ttl=gate.settings.person_timeout + 60)
    server: MCPServer = MCPServer(NAME, title="lexicoord agreement gate", version=__version__,
                                  instructions=INSTRUCTIONS, log_level="WARNING",
                                  request_state_security=security)

    async def check_instruction(instruction: Instruction, ctx: Context, context: Situation = "",
                                candidates: Candidates = None, key: Key = None) -> Verdict | InputRequiredResult:
        if ctx.request_state is not None:  # the client's retry with the person's answer (2026-07-28)
            return await _resumed(gate, ctx)
        verdict = await _call(gate.check(instruction, context=context, candidates=candidates, key=key))
        return await _clarified(gate, ctx, verdict)

    async def answer_clarification(gate_id: GateId, choice: Choice = None, text: Text = None,
                                   refuse: Refuse = False, question: Asked = None) -> Verdict:
        return await _call(gate.answer(gate_id, choice=choice, text=text, refuse=refuse, question=question))

    async def verdict(gate_id: str) -> str:
        try:
            found = await gate.get(gate_id)
        except UnknownGate as exc:
            raise ResourceNotFoundError(str(exc)) from None
        except LexicoordError as exc:
            raise ResourceError(str(exc)) from None
        return found.model_dump_json(indent=2)

    server.add_tool(check_instruction, description=CHECK, annotations=CHECK_ANNOTATIONS, structured_output=True)
    server.add_tool(answer_clarification, description=ANSWER, annotations=ANSWER_ANNOTATIONS,
                    structured_output=True)
    server.resource("gate://{gate_id}", name="verdict", title="A gate's verdict", mime_type="application/json",
                    description="The verdict of the check gate_id as it stands (the Verdict of the tools).")(verdict)
    return server


def streamable_http_app(gate: Gate, **options: Any) -> Starlette:
    """The server for ``gate`` as the SDK's streamable-HTTP ASGI app, its endpoint at the app's root, for a web
    server to mount: ``web.mount("/mcp", app)`` serves it at ``/mcp``. ``options`` go to the SDK's
    ``MCPServer.streamable_http_app`` (``host``, ``transport_security``, ``stateless_http``, ``json_response``...).

    The app's lifespan runs its session manager, and a mounted app's lifespan is not run by Starlette: the host
    runs it inside its own (``async with app.router.lifespan_context(app): yield``)."""
    options.setdefault("streamable_http_path", "/")
    return build_server(gate).streamable_http_app(**options)


async def serve_stdio(gate: Gate) -> None:
    """Serve ``gate`` over stdin and stdout until the client closes them (stdout carries only the protocol: the
    SDK points file descriptor 1 at stderr while it serves, and logs go to stderr)."""
    server = build_server(gate)
    async with gate:
        await server.run_stdio_async()


# elicitation ------------------------------------------------------------------------------------------------
def _can_elicit(ctx: Context) -> bool:
    """Whether the client declared it can show a form (a bare ``elicitation: {}`` predates modes and counts)."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _input_required(ctx: Context) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, INPUT_REQUIRED_VERSION)


def _form(verdict: Verdict) -> tuple[str, dict[str, Any]]:
    """The question as an elicitation: its message, and a form with the options as an enum and a free text."""
    question = verdict.question or "What exactly do you want done?"
    how = ("Pick the reading you mean, or say it in your own words (or both)." if verdict.options
           else "Say what you mean in your own words.")
    message = f"{question}\n\nThe instruction: {verdict.instruction}\n\n{how} Decline if the agent should not act."
    properties: dict[str, Any] = {}
    if verdict.options:
        properties["choice"] = {"type": "string", "title": "Your choice", "enum": list(verdict.options),
                                "description": "The reading you mean."}
    properties["text"] = {"type": "string", "title": "In your words", "maxLength": MAX_ANSWER,
                          "description": "What you mean, if no choice says it (or to add to it)."}
    return message, {"type": "object", "properties": properties, "required": [] if verdict.options else ["text"]}


async def _clarified(gate: Gate, ctx: Context, verdict: Verdict) -> Verdict | InputRequiredResult:
    """``verdict``, or, while it asks and the client can elicit, what the gate says once the person answered."""
    if verdict.status != "ask" or not _can_elicit(ctx):
        return verdict
    if _input_required(ctx):  # the client asks, then calls again with the answer and this state
        message, schema = _form(verdict)
        request = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
        state = json.dumps({"gate": verdict.gate_id, "question": verdict.question, "asked": verdict.asked})
        return InputRequiredResult(input_requests={CLARIFY: request}, request_state=state)
    for _ in range(gate.settings.clarifications + 1):
        if verdict.status != "ask":
            break
        message, schema = _form(verdict)
        said: ElicitResult | None = None
        # No longer than the person has: then the gate refuses, and so does the call, instead of hanging on.
        left = None if verdict.expires_at is None else max(0.0, verdict.expires_at - time.time()) + GRACE
        try:
            with anyio.move_on_after(left):
                said = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except MCPError as exc:  # the client could not ask after all: the agent relays the question
            log.warning("elicitation failed (%s); returning the question to the agent", exc)
            return verdict
        if said is None:
            return await _call(gate.get(verdict.gate_id))
        answered = await _answered(gate, verdict, said)
        if answered is verdict:
            break
        verdict = answered
    return verdict


async def _resumed(gate: Gate, ctx: Context) -> Verdict | InputRequiredResult:
    """The client called again with the person's answer to the question this server sent (2026-07-28).

    Only an answer to the question still asked counts; a cancelled question, or a check that moved on meanwhile
    (answered on its page), returns the verdict as it stands, so a client is never asked in a loop."""
    try:
        state = json.loads(ctx.request_state or "")
        gate_id, question = str(state["gate"]), state.get("question")
    except (ValueError, KeyError, TypeError):
        raise ToolError("The request state does not name a gate; call check_instruction again without it.") from None
    verdict = await _call(gate.get(gate_id))
    said = (ctx.input_responses or {}).get(CLARIFY)
    if verdict.status != "ask" or verdict.question != question or not isinstance(said, ElicitResult) \
            or verdict.asked != state.get("asked"):
        return verdict
    answered = await _answered(gate, verdict, said)
    if answered is verdict:
        return verdict
    return await _clarified(gate, ctx, answered)  # a further question (the policy allows more than one)


async def _answered(gate: Gate, verdict: Verdict, said: ElicitResult) -> Verdict:
    """The gate's verdict after the person's elicited answer: declined refuses; cancelled (or accepted empty)
    leaves ``verdict`` as it is, for the agent to relay."""
    if said.action == "decline":
        return await _call(gate.answer(verdict.gate_id, refuse=True, question=verdict.asked))
    content = said.content or {}
    choice, text = content.get("choice"), content.get("text")
    choice = choice.strip() if isinstance(choice, str) and choice.strip() else None
    text = text.strip() if isinstance(text, str) and text.strip() else None
    if said.action != "accept" or (choice is None and text is None):
        return verdict
    return await _call(gate.answer(verdict.gate_id, choice=choice, text=text, question=verdict.asked))


async def _call(pending: Awaitable[Verdict]) -> Verdict:
    """Await a gate call; what it refuses becomes the tool's error, with the gate's sentence."""
    try:
        return await pending
    except LexicoordError as exc:
        raise ToolError(str(exc)) from None
