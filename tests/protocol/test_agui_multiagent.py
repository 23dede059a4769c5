"""Interrupts raised inside a Graph or Swarm node reach the AG-UI client, attributed to their node, and resume."""

from typing import Any

import pytest
from agui_support import SENT, AguiThread, LiveServer, approval, resolved, send_email

from strandslike import Agent
from strandslike.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, Swarm

RESEARCH = [text("The address is a@b.com.")]
MAILER = [tool_call("send_email", tool_use_id="tc-m1", to="a@b.com", subject="Found it"), text("Sent.")]


@pytest.fixture(autouse=True)
def _clear_sent():
    SENT.clear()


class NodeGate(HookProvider):
    """Asks before the mailer node runs (an interrupt of the orchestrator itself, on BeforeNodeCallEvent)."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.gate)

    def gate(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id == "mailer" and event.interrupt("gate", reason="about to email") != "go":
            event.cancel_node = "stopped by the user"


def graph_factory(*, gate: bool = False):
    def build(session_manager):
        research = Agent(name="research", model=ScriptedModel(RESEARCH, mode="conversation"))
        mailer = Agent(
            name="mailer", model=ScriptedModel(MAILER, mode="conversation"), tools=[send_email], hooks=[approval()]
        )
        builder = GraphBuilder()
        builder.add_node(research, "research")
        builder.add_node(mailer, "mailer")
        builder.add_edge("research", "mailer")
        builder.set_session_manager(session_manager)
        if gate:
            builder.set_hook_providers([NodeGate()])
        graph = builder.build()  # restores the nodes' conversations from the session
        return graph

    return build


async def test_a_graph_node_interrupt_reaches_the_client_with_its_node(tmp_path):
    with LiveServer(graph_factory(), tmp_path) as server:
        thread = AguiThread(server.url, "graph-1")
        paused = await thread.send("Find the address and email it")

        [interrupt] = paused.interrupts
        assert interrupt["id"].startswith("v1:node:")
        assert interrupt["id"].endswith("@graph-1")
        assert interrupt["metadata"]["nodeId"] == "mailer"
        assert interrupt["metadata"]["name"] == "approval"
        assert interrupt["reason"] == "tool_call"
        assert interrupt["toolCallId"] == "tc-m1"
        assert interrupt["message"] == "Send email to a@b.com with subject 'Found it'?"
        assert interrupt["responseSchema"]["required"] == ["approved"]
        steps = [(e["type"], e["stepName"]) for e in paused.events if e["type"].startswith("STEP_")]
        assert steps == [
            ("STEP_STARTED", "research"),
            ("STEP_FINISHED", "research"),
            ("STEP_STARTED", "mailer"),
            ("STEP_FINISHED", "mailer"),
        ]
        [start] = paused.of("TOOL_CALL_START")
        assert start["toolCallId"] == "tc-m1"
        [research_text] = paused.of("TEXT_MESSAGE_START")
        assert research_text["name"] == "research"
        authors = {m.get("name") for m in paused.messages if m["role"] == "assistant"}
        assert authors == {"research", "mailer"}
        assert all(m["id"].startswith(("research:", "mailer:")) for m in paused.messages)
        assert start["parentMessageId"] in {m["id"] for m in paused.messages if m.get("name") == "mailer"}
        assert research_text["messageId"] in {m["id"] for m in paused.messages}
        assert paused.state == {"research": {}, "mailer": {}}
        assert SENT == []

        (await thread.resume(resolved(interrupt, {"approved": "yes"}))).assert_error("INVALID_PAYLOAD")
        (await thread.send("something else")).assert_error("PENDING_INTERRUPTS")
        thread.messages.pop()

        done = await thread.resume(resolved(interrupt, {"approved": True}))

        assert done.outcome == {"type": "success"}
        assert SENT == [{"to": "a@b.com", "subject": "Found it", "body": ""}]
        assert done.results() == {"tc-m1": "Email sent to a@b.com."}
        assert "TOOL_CALL_START" not in done.types
        assert [m["content"] for m in done.messages if m.get("name") == "mailer" and m.get("content")] == ["Sent."]

        replay = await thread.resume(resolved(interrupt, {"approved": True}))
        assert replay.outcome == {"type": "success"}
        assert len(SENT) == 1


async def test_an_interrupt_before_a_node_runs_is_attributed_to_that_node(tmp_path):
    with LiveServer(graph_factory(gate=True), tmp_path) as server:
        thread = AguiThread(server.url, "graph-gate")
        [gate] = (await thread.send("Find the address and email it")).interrupts

        assert gate["id"].startswith("v1:before_node_call:")
        assert gate["reason"] == "confirmation"
        assert "toolCallId" not in gate
        assert gate["metadata"] == {"name": "gate", "reason": "about to email", "nodeId": "mailer"}
        assert gate["message"] == 'gate: "about to email"'

        [approval_interrupt] = (await thread.resume(resolved(gate, "go"))).interrupts
        assert approval_interrupt["metadata"]["nodeId"] == "mailer"
        done = await thread.resume(resolved(approval_interrupt, {"approved": True}))
        assert done.outcome == {"type": "success"}
        assert len(SENT) == 1


def swarm_factory(session_manager):
    mailer = Agent(
        name="mailer", model=ScriptedModel(MAILER, mode="conversation"), tools=[send_email], hooks=[approval()]
    )
    swarm = Swarm([mailer], session_manager=session_manager, preserve_node_history=True)
    return swarm


async def test_a_swarm_node_interrupt_reaches_the_client_with_its_node(tmp_path):
    with LiveServer(swarm_factory, tmp_path) as server:
        thread = AguiThread(server.url, "swarm-1")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts

        assert interrupt["metadata"]["nodeId"] == "mailer"
        assert interrupt["toolCallId"] == "tc-m1"

        done = await thread.resume(resolved(interrupt, {"approved": True}))

        assert done.outcome == {"type": "success"}
        assert SENT == [{"to": "a@b.com", "subject": "Found it", "body": ""}]
        assert done.results() == {"tc-m1": "Email sent to a@b.com."}


async def test_approve_with_edits_inside_a_graph_node(tmp_path):
    def build(session_manager):
        mailer = Agent(
            name="mailer",
            model=ScriptedModel(MAILER, mode="conversation"),
            tools=[send_email],
            hooks=[approval(allow_edits=True)],
        )
        builder = GraphBuilder()
        builder.add_node(mailer, "mailer")
        builder.set_session_manager(session_manager)
        graph = builder.build()
        return graph

    with LiveServer(build, tmp_path) as server:
        thread = AguiThread(server.url, "graph-edits")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        assert set(interrupt["responseSchema"]["properties"]["editedArgs"]["properties"]) == {"to", "subject", "body"}

        edits = {"to": "c@d.com", "subject": "Found it", "body": "edited"}
        done = await thread.resume(resolved(interrupt, {"approved": True, "editedArgs": edits}))

        assert done.outcome == {"type": "success"}
        assert SENT == [edits]
        assert "Email sent to c@d.com." in done.results()["tc-m1"]
