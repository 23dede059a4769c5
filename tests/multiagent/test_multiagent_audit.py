"""The interrupt audit trail of Graph and Swarm: raised (by which node, hook or tool), answered how, what then ran;
in the API (``graph.interrupt_audit``), persisted with the orchestrator's session, and read by a fresh process."""

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers import answer

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeNodeCallEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, Status, Swarm
from strandslike.session import FileSessionManager

REPO = Path(__file__).parent.parent.parent
SENT: list[str] = []


@tool
def send_email(to: str) -> str:
    """Send an email.

    Args:
        to: The recipient.
    """
    SENT.append(to)
    return f"Email sent to {to}."


@tool(context=True)
def delete_file(path: str, tool_context: ToolContext) -> str:
    """Delete a file after asking.

    Args:
        path: The file.
    """
    if tool_context.interrupt("confirm-delete", reason={"path": path}) != "y":
        return f"kept {path}"
    return f"deleted {path}"


def approve_emails(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "send_email" and event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = "The user declined."


MAILER_SCRIPT = [
    tool_call("send_email", tool_use_id="tc-1", to="a@b.com"),
    text("Sent."),
    tool_call("send_email", tool_use_id="tc-2", to="c@d.com"),
    text("Sent again."),
]


def mailer(name: str = "mailer", **kwargs: Any) -> Agent:
    model = ScriptedModel(MAILER_SCRIPT)
    return Agent(name=name, model=model, tools=[send_email], hooks=[approve_emails], callback_handler=None, **kwargs)


def graph_of(*agents: Agent, session_manager: Any = None, hooks: Any = None) -> Any:
    builder = GraphBuilder()
    for agent in agents:
        builder.add_node(agent, agent.name)
    for first, second in itertools.pairwise(agents):
        builder.add_edge(first.name, second.name)
    if session_manager is not None:
        builder.set_session_manager(session_manager)
    if hooks is not None:
        builder.set_hook_providers(hooks)
    return builder.build()


def events(audit: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(entry["event"], entry.get("node_id")) for entry in audit]


def setup_function() -> None:
    SENT.clear()


# -- raised inside a node -------------------------------------------------------------------------------------------


async def test_a_node_agents_hook_interrupt_is_raised_answered_and_settled_in_the_graphs_trail() -> None:
    graph = graph_of(mailer())
    paused = await graph.invoke_async("email a@b.com")
    [interrupt] = paused.interrupts

    [raised] = graph.interrupt_audit
    assert raised["event"] == "raised"
    assert raised["interrupt_id"] == interrupt.id
    assert raised["name"] == "approval"
    assert raised["node_id"] == "mailer"
    assert raised["by"] == "node mailer: hook 'approve_emails' on BeforeToolCallEvent"
    assert raised["reason"] == {"to": "a@b.com"}
    assert raised["inner_id"].startswith("v1:before_tool_call:tc-1:")
    assert isinstance(raised["time"], float)

    done = await graph.invoke_async([answer(interrupt, "y")])

    assert done.status == Status.COMPLETED
    assert SENT == ["a@b.com"]
    assert events(graph.interrupt_audit) == [("raised", "mailer"), ("answered", "mailer"), ("outcome", "mailer")]
    _, answered, outcome = graph.interrupt_audit
    assert (answered["action"], answered["answer"]) == ("resume", "y")
    assert outcome["action"] == "resume"
    assert outcome["result"]["content"] == [{"text": "Email sent to a@b.com."}]
    assert outcome["inner_id"] == raised["inner_id"]
    assert all(entry["interrupt_id"] == interrupt.id for entry in graph.interrupt_audit)


async def test_a_cancelled_tool_interrupt_records_that_nothing_ran() -> None:
    model = ScriptedModel([tool_call("delete_file", tool_use_id="tc-d", path="/tmp/x"), text("ok")])
    worker = Agent(name="worker", model=model, tools=[delete_file], callback_handler=None)
    graph = graph_of(worker)
    [interrupt] = (await graph.invoke_async("clean")).interrupts
    assert graph.interrupt_audit[0]["by"] == "node worker: tool delete_file"

    await graph.invoke_async([interrupt.cancel()])

    outcome = graph.interrupt_audit[-1]
    assert outcome["event"] == "outcome"
    assert outcome["action"] == "cancel"
    assert outcome["result"]["status"] == "error"
    assert "cancelled" in json.dumps(outcome["result"]).lower()


async def test_a_node_that_fails_after_its_answer_records_the_failure() -> None:
    def broken(event: BeforeToolCallEvent) -> None:
        if event.agent._interrupt_state.activated and not event.agent._interrupt_state.unanswered():
            raise RuntimeError("hook broke after the answer")

    node = mailer()
    node.hooks.add_callback(BeforeToolCallEvent, broken)
    graph = graph_of(node)
    [interrupt] = (await graph.invoke_async("email")).interrupts

    failed = await graph.invoke_async([answer(interrupt, "y")])

    assert failed.status == Status.FAILED
    assert SENT == []
    outcome = graph.interrupt_audit[-1]
    assert outcome["event"] == "outcome"
    assert outcome["result"] == "node failed: RuntimeError: hook broke after the answer"
    assert outcome["node_id"] == "mailer"


# -- raised by BeforeNodeCallEvent hooks ------------------------------------------------------------------------------


def node_gate(event: BeforeNodeCallEvent) -> None:
    if event.node_id == "mailer" and event.interrupt("run-node", reason={"node": event.node_id}) != "y":
        event.cancel_node = "not today"


async def test_a_before_node_call_hook_interrupt_records_whether_the_node_ran() -> None:
    writer = Agent(name="writer", model=ScriptedModel([text("Draft."), text("Draft 2.")]), callback_handler=None)
    second = Agent(name="mailer", model=ScriptedModel([text("Hi."), text("Hi again.")]), callback_handler=None)
    graph = graph_of(writer, second)
    graph.hooks.add_callback(BeforeNodeCallEvent, node_gate)
    [interrupt] = (await graph.invoke_async("go")).interrupts
    raised = graph.interrupt_audit[0]
    assert raised["node_id"] == "mailer"
    assert raised["by"] == "hook 'node_gate' on BeforeNodeCallEvent before node mailer"

    await graph.invoke_async([answer(interrupt, "y")])
    [*_, answered, outcome] = graph.interrupt_audit
    assert (answered["event"], answered["answer"]) == ("answered", "y")
    assert (outcome["event"], outcome["result"], outcome["node_id"]) == ("outcome", "node ran", "mailer")

    # A second run asks again; this time the node is refused, and the trail keeps both runs.
    [again] = (await graph.invoke_async("go again")).interrupts
    result = await graph.invoke_async([answer(again, "n")])
    assert result.results["mailer"].status == Status.FAILED
    assert [entry["event"] for entry in graph.interrupt_audit] == ["raised", "answered", "outcome"] * 2
    assert graph.interrupt_audit[-1]["result"] == "node cancelled: not today"


# -- Swarm, nesting -------------------------------------------------------------------------------------------------


async def test_a_swarm_records_its_nodes_interrupts_even_though_it_resets_its_agents() -> None:
    swarm = Swarm([mailer()])
    [interrupt] = (await swarm.invoke_async("email")).interrupts
    await swarm.invoke_async([answer(interrupt, "n")])
    assert SENT == []
    assert events(swarm.interrupt_audit) == [("raised", "mailer"), ("answered", "mailer"), ("outcome", "mailer")]
    assert swarm.interrupt_audit[-1]["result"]["content"] == [{"text": "The user declined."}]

    before = swarm.interrupt_audit
    await swarm.invoke_async("email again")  # a new run resets the agent (and its own trail), not the swarm's
    assert swarm.interrupt_audit[:3] == before
    assert events(swarm.interrupt_audit[3:]) == [("raised", "mailer")]
    assert [entry["event"] for entry in swarm.nodes["mailer"].executor.interrupt_audit] == ["raised"]


async def test_a_nested_graph_reports_the_path_and_the_outcome_at_every_level() -> None:
    inner = graph_of(mailer())
    outer_builder = GraphBuilder()
    outer_builder.add_node(inner, "team")
    outer = outer_builder.build()
    [interrupt] = (await outer.invoke_async("email")).interrupts
    raised = outer.interrupt_audit[0]
    assert raised["node_id"] == "team"
    assert raised["by"] == "node team: node mailer: hook 'approve_emails' on BeforeToolCallEvent"

    await outer.invoke_async([answer(interrupt, "y")])

    assert SENT == ["a@b.com"]
    assert events(outer.interrupt_audit) == [("raised", "team"), ("answered", "team"), ("outcome", "team")]
    assert outer.interrupt_audit[-1]["result"]["content"] == [{"text": "Email sent to a@b.com."}]
    assert events(inner.interrupt_audit) == [("raised", "mailer"), ("answered", "mailer"), ("outcome", "mailer")]


# -- persisted ------------------------------------------------------------------------------------------------------


def persisted_graph(storage: Path) -> Any:
    """The graph a server builds for every request: restored from the session, its script going on from there."""
    graph = graph_of(mailer(), session_manager=FileSessionManager("audited", storage_dir=storage))
    agent = graph.nodes["mailer"].executor
    played = sum(1 for message in agent.messages if message["role"] == "assistant")
    agent.model = ScriptedModel(MAILER_SCRIPT[played:])
    return graph


async def test_the_trail_is_persisted_and_a_restored_graph_goes_on_with_it(tmp_path: Path) -> None:
    first = persisted_graph(tmp_path)
    [interrupt] = (await first.invoke_async("email")).interrupts
    first.session_manager.close()

    restored = persisted_graph(tmp_path)  # a fresh graph on the stored session, as a new process builds it
    assert restored.interrupt_audit == first.interrupt_audit
    await restored.invoke_async([answer(interrupt, "y")])
    restored.session_manager.close()

    again = persisted_graph(tmp_path)
    assert events(again.interrupt_audit) == [("raised", "mailer"), ("answered", "mailer"), ("outcome", "mailer")]
    assert again.interrupt_audit == restored.interrupt_audit


def test_sessions_audit_in_a_fresh_process_shows_the_orchestrators_trail(tmp_path: Path) -> None:
    graph = persisted_graph(tmp_path)
    [interrupt] = graph("email").interrupts
    graph([answer(interrupt, "y")])
    graph.session_manager.close()

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "strandslike", "sessions", "audit", "audited", "--storage-dir", str(tmp_path)]
    command.append("--full")
    shown = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout
    as_json = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env, check=True).stdout

    assert "session audited, graph default_graph: 3 audit entries" in shown
    lines = [line for line in shown.splitlines() if "approval (" in line]
    assert [line.split()[1] for line in lines] == ["raised", "answered", "outcome"]
    assert all('"node_id": "mailer"' in line for line in lines)
    assert "hook 'approve_emails' on BeforeToolCallEvent" in lines[0]
    data = json.loads(as_json)
    [multi_agent] = data["multi_agents"]
    assert multi_agent["multi_agent_id"] == "default_graph"
    assert multi_agent["type"] == "graph"
    assert multi_agent["audit"] == graph.interrupt_audit
