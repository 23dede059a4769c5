"""`HumanInTheLoop` on the agents of Graph and Swarm nodes: unchanged, through the orchestrators' interrupts."""

from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, Status, Swarm
from strandslike.session import FileSessionManager
from strandslike.vended_interventions.hitl import ApprovalPolicy, HumanInTheLoop, PolicyRule

SENT: list[dict[str, Any]] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    SENT.clear()


@tool
def send_email(to: str, subject: str) -> str:
    """Send an email.

    Args:
        to: The recipient.
        subject: The subject.
    """
    SENT.append({"to": to, "subject": subject})
    return f"sent to {to}"


POLICY = ApprovalPolicy([PolicyRule("internal mail", "send_email", "allow", {"to": {"glob": "*@corp.example"}})])


def mailer(turns: list[Any]) -> Agent:
    return Agent(
        name="mailer",
        model=ScriptedModel(turns),
        tools=[send_email],
        interventions=[HumanInTheLoop(policy=POLICY, enable_trust=True)],
    )


def graph(mail: Agent, session_manager: Any = None) -> Any:
    builder = GraphBuilder()
    builder.add_node(Agent(name="research", model=ScriptedModel([text("found them")])), "research")
    builder.add_node(mail, "mailer")
    builder.add_edge("research", "mailer")
    if session_manager is not None:
        builder.set_session_manager(session_manager)
    return builder.build()


def test_a_graph_node_asks_and_an_edited_approval_reaches_its_tool():
    mail = mailer(
        [
            tool_call("send_email", to="boss@corp.example", subject="internal", tool_use_id="m1"),
            tool_call("send_email", to="x@outside.example", subject="hello", tool_use_id="m2"),
            text("sent"),
        ]
    )
    orchestration = graph(mail)
    paused = orchestration("email everyone")
    assert paused.status == Status.INTERRUPTED
    (interrupt,) = paused.interrupts
    assert orchestration.pending_interrupts == [interrupt]
    assert interrupt.id.startswith("v1:node:")
    assert interrupt.metadata["node_id"] == "mailer"
    assert interrupt.metadata["tool"] == "send_email"
    assert interrupt.message.startswith('Approve "send_email"?')
    assert interrupt.response_schema is not None
    assert SENT == [{"to": "boss@corp.example", "subject": "internal"}]  # allowed by the policy rule

    done = orchestration(
        [interrupt.restart(input={"to": "y@outside.example", "subject": "hi"}, metadata={"by": "ana"})]
    )
    assert done.status == Status.COMPLETED
    assert orchestration.pending_interrupts == []
    assert SENT[-1] == {"to": "y@outside.example", "subject": "hi"}
    kinds = [(e["decision"], e["decided_by"]) for e in mail.interrupt_audit if e["event"] == "decision"]
    assert kinds == [("allowed", "rule:internal mail"), ("edited", "ana")]


def test_trust_granted_in_a_swarm_node_covers_its_next_calls():
    mail = mailer(
        [
            tool_call("send_email", to="a@outside.example", subject="1", tool_use_id="s1"),
            tool_call("send_email", to="b@outside.example", subject="2", tool_use_id="s2"),
            text("done"),
        ]
    )
    swarm = Swarm([mail])
    paused = swarm("send two")
    assert paused.status == Status.INTERRUPTED
    done = swarm([paused.interrupts[0].resume("t")])
    assert done.status == Status.COMPLETED
    assert [email["to"] for email in SENT] == ["a@outside.example", "b@outside.example"]
    assert [g.tool for g in HumanInTheLoop.list_trust(mail)] == ["send_email"]


def test_a_graph_persisted_by_its_session_resumes_in_a_fresh_graph_and_keeps_the_trust(tmp_path):
    turns = [tool_call("send_email", to="a@outside.example", subject="1", tool_use_id="p1"), text("done")]
    first = graph(mailer(turns), FileSessionManager("g", storage_dir=tmp_path))
    paused = first("send")
    interrupt_id = paused.interrupts[0].id

    mail = mailer([text("done")])  # the paused batch is replayed from the session: no model call for it
    second = graph(mail, FileSessionManager("g", storage_dir=tmp_path))
    assert [i.id for i in second.pending_interrupts] == [interrupt_id]
    done = second([second.pending_interrupts[0].resume({"decision": "trust", "by": "ops"})])
    assert done.status == Status.COMPLETED
    assert SENT == [{"to": "a@outside.example", "subject": "1"}]

    third = graph(mailer([]), FileSessionManager("g", storage_dir=tmp_path))
    node_agent = third.nodes["mailer"].executor
    assert [(g.tool, g.granted_by) for g in HumanInTheLoop.list_trust(node_agent)] == [("send_email", "ops")]
