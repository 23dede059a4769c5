"""Every decision in ``agent.interrupt_audit`` with who decided, the policy in the loop, and ``ask_timeout``."""

import threading
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.vended_interventions.hitl import ApprovalPolicy, HumanInTheLoop, PolicyRule

RUNS: list[Any] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RUNS.clear()


@tool
def refund(amount: float, order: str) -> str:
    """Refund an order.

    Args:
        amount: How much.
        order: Which order.
    """
    RUNS.append((order, amount))
    return "refunded"


@tool
def lookup(order: str) -> str:
    """Look an order up.

    Args:
        order: Which order.
    """
    RUNS.append(("lookup", order))
    return "found"


POLICY = ApprovalPolicy(
    [
        PolicyRule("lookups", "lookup", "allow"),
        PolicyRule("small refunds", "refund", "allow", {"amount": {"max": 50}}),
        PolicyRule("huge refunds", "refund", "deny", {"amount": {"min": 10000}}, "too large for an agent"),
    ],
    default="ask",
)


def decisions(agent: Agent) -> list[tuple[Any, ...]]:
    return [
        (entry["decision"], entry["decided_by"], entry.get("rule"), entry["tool_use_id"])
        for entry in agent.interrupt_audit
        if entry["event"] == "decision"
    ]


def test_every_kind_of_decision_is_audited_with_who_decided():
    model = ScriptedModel(
        [
            turn(
                tool_call("lookup", order="o1", tool_use_id="look"),
                tool_call("refund", amount=20, order="o1", tool_use_id="small"),
                tool_call("refund", amount=20000, order="o2", tool_use_id="huge"),
                tool_call("refund", amount=500, order="o3", tool_use_id="ok"),
                tool_call("refund", amount=700, order="o4", tool_use_id="edit"),
                tool_call("refund", amount=900, order="o5", tool_use_id="no"),
            ),
            turn(tool_call("refund", amount=800, order="o6", tool_use_id="trusted")),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[refund, lookup], interventions=[HumanInTheLoop(policy=POLICY, enable_trust=True)])
    paused = agent("refund everything")
    by_call = {interrupt.tool_use_id: interrupt for interrupt in paused.interrupts}
    assert sorted(by_call) == ["edit", "no", "ok"]
    assert by_call["ok"].message == 'Approve "refund"?\n  Input: {"amount": 500, "order": "o3"}'

    done = agent(
        [
            by_call["ok"].resume({"decision": "trust", "by": "carol", "reason": "known customer"}),
            by_call["edit"].restart(input={"amount": 70, "order": "o4"}, metadata={"by": "dave"}),
            by_call["no"].resume({"decision": "deny", "by": "erin", "reason": "duplicate"}),
        ]
    )
    assert done.stop_reason == "end_turn"
    assert sorted(RUNS) == [("lookup", "o1"), ("o1", 20), ("o3", 500), ("o4", 70), ("o6", 800)]

    assert sorted(decisions(agent)) == sorted(
        [
            ("allowed", "rule:lookups", "lookups", "look"),
            ("allowed", "rule:small refunds", "small refunds", "small"),
            ("denied", "rule:huge refunds", "huge refunds", "huge"),
            ("approved", "carol", None, "ok"),
            ("edited", "dave", None, "edit"),
            ("denied", "erin", None, "no"),
            ("trusted", "trust:refund", None, "trusted"),
        ]
    )
    entries = {e["tool_use_id"]: e for e in agent.interrupt_audit if e["event"] == "decision"}
    assert entries["ok"]["reason"] == "known customer"
    assert entries["ok"]["trust"]["granted_by"] == "carol"
    assert entries["edit"]["input"] == {"amount": 70, "order": "o4"}
    assert entries["edit"]["interrupt_id"] == by_call["edit"].id
    assert entries["huge"]["reason"] == "too large for an agent"
    huge_result = next(
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block and block["toolResult"]["toolUseId"] == "huge"
    )
    assert huge_result["content"][0]["text"] == (
        'DENIED: Tool "refund" denied by rule "huge refunds": too large for an agent'
    )


def test_the_policy_default_and_allowed_tools_decide_when_no_rule_matches():
    deny_by_default = HumanInTheLoop(policy=ApprovalPolicy(default="deny"), allowed_tools=["lookup"])
    agent = Agent(
        model=ScriptedModel(
            [
                turn(
                    tool_call("lookup", order="o", tool_use_id="l"),
                    tool_call("refund", amount=1, order="o", tool_use_id="r"),
                ),
                text("done"),
            ]
        ),
        tools=[refund, lookup],
        interventions=[deny_by_default],
    )
    agent("go")
    assert RUNS == [("lookup", "o")]
    assert sorted(decisions(agent)) == [
        ("allowed", "allowed_tools", None, "l"),
        ("denied", "policy:default", None, "r"),
    ]


def test_a_policy_allow_rule_does_not_unlock_a_negated_tool():
    handler = HumanInTheLoop(policy=POLICY, allowed_tools=["*", "!refund"], ask=lambda prompt: "n")
    agent = Agent(
        model=ScriptedModel([tool_call("refund", amount=1, order="o"), text("done")]),
        tools=[refund],
        interventions=[handler],
    )
    agent("go")
    assert RUNS == []
    (decision,) = decisions(agent)
    assert decision[:3] == (
        "denied",
        "ask:test_a_policy_allow_rule_does_not_unlock_a_negated_tool.<locals>.<lambda>",
        "small refunds",
    )


def test_an_ask_rule_asks_even_for_allowed_tools_but_trust_answers_it():
    policy = ApprovalPolicy([PolicyRule("always ask", "lookup", "ask", reason="audited lookups")])
    agent = Agent(
        model=ScriptedModel([tool_call("lookup", order="a"), tool_call("lookup", order="b"), text("done")]),
        tools=[lookup],
        interventions=[HumanInTheLoop(policy=policy, allowed_tools=["*"], enable_trust=True)],
    )
    paused = agent("go")
    assert paused.interrupts[0].reason.startswith('Approve "lookup" — audited lookups?')
    assert paused.interrupts[0].metadata["rule"] == "always ask"
    assert agent([paused.interrupts[0].resume("t")]).stop_reason == "end_turn"
    assert RUNS == [("lookup", "a"), ("lookup", "b")]


def test_a_plain_resume_with_edits_is_refused_so_edits_are_never_dropped():
    agent = Agent(
        model=ScriptedModel([tool_call("refund", amount=9, order="o"), text("done")]),
        tools=[refund],
        interventions=[HumanInTheLoop()],
    )
    paused = agent("go")
    agent([paused.interrupts[0].resume({"approved": True, "editedArgs": {"amount": 1, "order": "o"}})])
    assert RUNS == []
    (entry,) = [e for e in agent.interrupt_audit if e["event"] == "decision"]
    assert entry["decision"] == "denied"
    assert "interrupt.restart(input=...)" in entry["reason"]


def test_inline_answers_are_audited_with_the_ask_callback():
    def slack(prompt: str) -> Any:
        return {"decision": "approve", "by": "frank"}

    def silent(prompt: str) -> Any:
        return "yes"

    for ask, by in (
        (slack, "frank"),
        (silent, "ask:test_inline_answers_are_audited_with_the_ask_callback.<locals>.silent"),
    ):
        agent = Agent(
            model=ScriptedModel([tool_call("lookup", order="o"), text("done")]),
            tools=[lookup],
            interventions=[HumanInTheLoop(ask=ask)],
        )
        agent("go")
        assert decisions(agent)[0][:2] == ("approved", by)


# -- ask_timeout --------------------------------------------------------------------------------------------------


async def test_an_async_ask_that_does_not_answer_in_time_falls_back_to_an_interrupt():
    asked: list[str] = []

    async def never(prompt: str) -> str:
        asked.append(prompt)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    model = ScriptedModel([tool_call("refund", amount=5, order="o"), text("done")])
    agent = Agent(model=model, tools=[refund], interventions=[HumanInTheLoop(ask=never, ask_timeout=0.05)])
    paused = await agent.invoke_async("go")
    assert paused.stop_reason == "interrupt"
    (interrupt,) = paused.interrupts
    assert interrupt.metadata["ask_timed_out_after"] == 0.05
    assert interrupt.message
    assert interrupt.response_schema is not None
    assert [e["decision"] for e in agent.interrupt_audit if e["event"] == "decision"] == ["timed_out"]

    done = await agent.invoke_async([interrupt.resume({"decision": "approve", "by": "gina"})])
    assert done.stop_reason == "end_turn"
    assert RUNS == [("o", 5)]
    assert len(asked) == 1  # the resumed call is not asked about inline again
    assert [(e["decision"], e["decided_by"]) for e in agent.interrupt_audit if e["event"] == "decision"] == [
        ("timed_out", "ask:test_an_async_ask_that_does_not_answer_in_time_falls_back_to_an_interrupt.<locals>.never"),
        ("approved", "gina"),
    ]


def test_a_blocking_ask_runs_in_a_worker_thread_and_is_abandoned_at_the_deadline():
    release = threading.Event()

    def blocking(prompt: str) -> str:
        release.wait(10)
        return "yes"

    try:
        agent = Agent(
            model=ScriptedModel([tool_call("refund", amount=5, order="o"), text("done")]),
            tools=[refund],
            interventions=[HumanInTheLoop(ask=blocking, ask_timeout=0.05)],
        )
        paused = agent("go")
        assert paused.stop_reason == "interrupt"
        assert RUNS == []
    finally:
        release.set()


def test_an_ask_that_answers_in_time_decides_as_usual():
    async def quick(prompt: str) -> str:
        await anyio.lowlevel.checkpoint()
        return "y"

    agent = Agent(
        model=ScriptedModel([tool_call("refund", amount=5, order="o"), text("done")]),
        tools=[refund],
        interventions=[HumanInTheLoop(ask=quick, ask_timeout=5)],
    )
    assert agent("go").stop_reason == "end_turn"
    assert RUNS == [("o", 5)]
