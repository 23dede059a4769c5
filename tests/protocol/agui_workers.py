"""Agent factories for ``serve`` processes in the two-server tests (``--agent agui_workers:build``).

Every effect is appended to the file named by ``AGUI_EFFECTS`` (one JSON line per event, one ``write`` each, so
lines from two processes never interleave): ``{"event": "decided", ...}`` when the approval hook receives an
answer (the answer was applied by this process), ``{"event": "ran", ...}`` when the approved tool body runs.

If ``AGUI_GATE`` names a loopback port, the approval hook connects to it after receiving an answer and waits for
one byte before going on: the test holds the run that proceeds at that point until the competing request was
answered, which makes the two requests overlap deterministically.
"""

import json
import os
import socket
from typing import Any

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder

ROUNDS = 200


def record(event: str, **details: Any) -> None:
    """Append one effect line to the effects file."""
    line = json.dumps({"event": event, "pid": os.getpid(), **details}) + "\n"
    fd = os.open(os.environ["AGUI_EFFECTS"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def wait_at_gate() -> None:
    port = os.environ.get("AGUI_GATE")
    if not port:
        return
    with socket.create_connection(("127.0.0.1", int(port)), timeout=60) as gate:
        gate.recv(1)


@tool(context=True)
def send_email(to: str, subject: str, tool_context: ToolContext) -> str:
    """Send an email.

    Args:
        to: The recipient.
        subject: The subject.
    """
    record("ran", tool_use_id=tool_context.tool_use["toolUseId"], to=to)
    return f"Email sent to {to}."


def approve(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] != "send_email":
        return
    answer = event.interrupt("approval", reason=event.tool_use["input"], message="Send this email?")
    record("decided", tool_use_id=event.tool_use["toolUseId"], answer=answer)
    wait_at_gate()
    if answer != "y":
        event.cancel_tool = "The user declined."


def _script() -> list[Any]:
    turns: list[Any] = []
    for number in range(ROUNDS):
        turns += [tool_call("send_email", tool_use_id=f"tc-{number}", to="a@b.com", subject="Hi"), text("Done.")]
    return turns


SCRIPT = _script()


def _agent(**kwargs: Any) -> Agent:
    return Agent(model=ScriptedModel(SCRIPT), tools=[send_email], hooks=[approve], callback_handler=None, **kwargs)


def _continue(agent: Agent) -> Agent:
    played = sum(1 for message in agent.messages if message["role"] == "assistant")
    if played:
        agent.model = ScriptedModel(SCRIPT[played:])
    return agent


def build(session_manager: Any) -> Agent:
    """An agent whose scripted model proposes one email per user message; the email needs approval ("y")."""
    return _continue(_agent(session_manager=session_manager))


def build_graph(session_manager: Any) -> Any:
    """A one-node Graph around the same agent (its conversation persisted with the graph's session)."""
    builder = GraphBuilder()
    builder.add_node(_agent(name="mailer"), "mailer")
    builder.set_session_manager(session_manager)
    graph = builder.build()
    _continue(graph.nodes["mailer"].executor)
    return graph


def build_swarm(session_manager: Any) -> Any:
    """A one-agent Swarm around the same agent, keeping its history across runs."""
    from strandslike.multiagent import Swarm

    mailer = _agent(name="mailer")
    swarm = Swarm([mailer], session_manager=session_manager, preserve_node_history=True)
    _continue(mailer)
    return swarm
