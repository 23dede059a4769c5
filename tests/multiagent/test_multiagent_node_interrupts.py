"""Interrupts raised inside a node (by a tool of the node's agent), in Graph and Swarm, and parallel graph nodes."""

from typing import Any

import pytest
from helpers import answer, answers

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import (
    AfterNodeCallEvent,
    BeforeModelCallEvent,
    BeforeNodeCallEvent,
    BeforeToolCallEvent,
    HookProvider,
    HookRegistry,
)
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, Status, Swarm
from strandslike.types.interrupt import name_uuid


class AfterNodes(HookProvider):
    def __init__(self) -> None:
        self.nodes: list[str] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(AfterNodeCallEvent, lambda event: self.nodes.append(event.node_id))


def approval_tool(runs: list[tuple[str, Any]]) -> Any:
    @tool(context=True)
    def cleanup(resource: str, tool_context: ToolContext) -> str:
        """Clean up a resource after approval.

        Args:
            resource: The resource.
        """
        approval = tool_context.interrupt("approval", reason={"resource": resource})
        runs.append((resource, approval))
        return f"cleaned {resource}" if approval == "y" else f"kept {resource}"

    return cleanup


def tool_agent(name: str, resource: str, runs: list[tuple[str, Any]], *, tool_use_id: str = "t1") -> tuple[Agent, Any]:
    model = ScriptedModel([tool_call("cleanup", tool_use_id=tool_use_id, resource=resource), text(f"{name} done")])
    return Agent(name=name, model=model, tools=[approval_tool(runs)], callback_handler=None), model


def text_agent(name: str, *replies: str) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([text(reply) for reply in replies or (f"{name} done",)])
    return Agent(name=name, model=model, callback_handler=None), model


def expected_id(node_id: str, tool_use_id: str = "t1", name: str = "approval") -> str:
    return f"v1:node:{name_uuid(node_id)}:v1:tool_call:{tool_use_id}:{name_uuid(name)}"


def tool_results(agent: Agent) -> list[dict[str, Any]]:
    return [block["toolResult"] for message in agent.messages for block in message["content"] if "toolResult" in block]


# -- a tool interrupt in one node ---------------------------------------------------------------------------------


async def test_graph_node_tool_interrupt_pauses_the_graph_and_resumes_into_successors() -> None:
    runs: list[tuple[str, Any]] = []
    worker, worker_model = tool_agent("worker", "db", runs)
    after, after_model = text_agent("after")
    observer = AfterNodes()
    builder = GraphBuilder()
    builder.add_node(worker, "worker")
    builder.add_node(after, "after")
    builder.add_edge("worker", "after")
    builder.set_hook_providers([observer])
    graph = builder.build()

    paused = await graph.invoke_async("clean the db")

    assert paused.status == Status.INTERRUPTED
    [interrupt] = paused.interrupts
    assert interrupt.id == expected_id("worker")
    assert interrupt.id.startswith("v1:node:")
    assert (interrupt.name, interrupt.reason) == ("approval", {"resource": "db"})
    node = paused.results["worker"]
    assert node.status == Status.INTERRUPTED
    assert [i.id for i in node.interrupts] == [interrupt.id]
    assert node.result.stop_reason == "interrupt"
    assert "after" not in paused.results
    assert observer.nodes == []  # no AfterNodeCallEvent for the interrupted node
    assert (paused.completed_nodes, paused.interrupted_nodes) == (0, 1)
    assert runs == []
    assert (worker_model.calls, after_model.calls) == (1, 0)

    done = await graph.invoke_async([answer(interrupt, "y")])

    assert done.status == Status.COMPLETED
    assert done.interrupts == []
    assert runs == [("db", "y")]
    assert worker_model.calls == 2  # the tool-use turn was not asked for again
    assert after_model.calls == 1
    assert tool_results(worker)[0]["content"] == [{"text": "cleaned db"}]
    assert done.results["worker"].status == Status.COMPLETED
    assert done.results["worker"].result.message["content"] == [{"text": "worker done"}]
    assert done.results["after"].status == Status.COMPLETED
    assert [n.node_id for n in done.execution_order] == ["worker", "after"]
    assert observer.nodes == ["worker", "after"]
    assert "worker done" in str(after_model.requests[0].messages[0])


async def test_swarm_node_tool_interrupt_pauses_the_swarm_and_resumes_the_node() -> None:
    runs: list[tuple[str, Any]] = []
    cleanup_model = ScriptedModel(
        [
            tool_call("cleanup", tool_use_id="t1", resource="db"),
            tool_call("handoff_to_agent", tool_use_id="h1", agent_name="reporter", message="report it"),
            text("handed off"),
        ]
    )
    cleanup = Agent(name="cleanup", model=cleanup_model, tools=[approval_tool(runs)], callback_handler=None)
    reporter, reporter_model = text_agent("reporter", "reported")
    observer = AfterNodes()
    swarm = Swarm([cleanup, reporter], hooks=[observer])

    paused = await swarm.invoke_async("clean the db")

    assert paused.status == Status.INTERRUPTED
    [interrupt] = paused.interrupts
    assert interrupt.id == expected_id("cleanup")
    assert paused.results["cleanup"].status == Status.INTERRUPTED
    assert paused.results["cleanup"].interrupts == [interrupt]
    assert paused.node_history == []
    assert observer.nodes == []
    assert (cleanup_model.calls, reporter_model.calls) == (1, 0)

    done = await swarm.invoke_async([answer(interrupt, "y")])

    assert done.status == Status.COMPLETED
    assert runs == [("db", "y")]
    assert cleanup_model.calls == 3  # resumed after the tool-use turn: 1 before, 2 after
    assert reporter_model.calls == 1
    assert [node.node_id for node in done.node_history] == ["cleanup", "reporter"]
    assert done.results["cleanup"].status == Status.COMPLETED
    assert done.results["reporter"].result.message["content"] == [{"text": "reported"}]
    assert observer.nodes == ["cleanup", "reporter"]


@pytest.mark.parametrize("kind", ["graph", "swarm"])
async def test_node_tool_interrupt_streams_an_interrupt_event_and_no_after_node_hook(kind: str) -> None:
    runs: list[tuple[str, Any]] = []
    worker, _ = tool_agent("worker", "db", runs)
    if kind == "graph":
        builder = GraphBuilder()
        builder.add_node(worker, "worker")
        orchestrator: Any = builder.build()
    else:
        orchestrator = Swarm([worker])

    events = [event async for event in orchestrator.stream_async("go")]

    types = [event["type"] for event in events]
    assert types[0] == "multiagent_node_start"
    assert types[-3:] == ["multiagent_node_interrupt", "multiagent_node_stop", "multiagent_result"]
    [interrupt_event] = [event for event in events if event["type"] == "multiagent_node_interrupt"]
    assert [i.id for i in interrupt_event["interrupts"]] == [expected_id("worker")]
    assert events[-2]["node_result"].status == Status.INTERRUPTED
    inner = [event["event"] for event in events if event["type"] == "multiagent_node_stream"]
    assert any("tool_interrupt_event" in event for event in inner)
    assert events[-1]["result"].status == Status.INTERRUPTED

    resumed = [event async for event in orchestrator.stream_async(answers(events[-1]["result"].interrupts, "y"))]
    assert resumed[-1]["result"].status == Status.COMPLETED
    assert runs == [("db", "y")]


async def test_a_denied_tool_interrupt_still_completes_the_node() -> None:
    runs: list[tuple[str, Any]] = []
    worker, _ = tool_agent("worker", "db", runs)
    swarm = Swarm([worker])
    paused = await swarm.invoke_async("go")
    done = await swarm.invoke_async(answers(paused.interrupts, "n"))
    assert done.status == Status.COMPLETED
    assert runs == [("db", "n")]
    assert tool_results(worker)[0]["content"] == [{"text": "kept db"}]


# -- two parallel graph nodes that both interrupt -----------------------------------------------------------------


def diamond(fan_in: Any = "all") -> tuple[Any, dict[str, ScriptedModel], list[tuple[str, Any]]]:
    """A → B, A → C, (B, C) → D; B and C each call ``cleanup`` with the same tool-use id and interrupt name."""
    runs: list[tuple[str, Any]] = []
    a, model_a = text_agent("a")
    b, model_b = tool_agent("b", "rb", runs)
    c, model_c = tool_agent("c", "rc", runs)
    d, model_d = text_agent("d")
    builder = GraphBuilder()
    builder.add_node(a, "a")
    builder.add_node(b, "b")
    builder.add_node(c, "c")
    builder.add_node(d, "d", fan_in=fan_in)
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge("b", "d")
    builder.add_edge("c", "d")
    return builder.build(), {"a": model_a, "b": model_b, "c": model_c, "d": model_d}, runs


def calls(models: dict[str, ScriptedModel]) -> dict[str, int]:
    return {node_id: model.calls for node_id, model in models.items()}


async def test_two_parallel_nodes_interrupt_with_distinct_ids_and_both_resume() -> None:
    graph, models, runs = diamond()

    paused = await graph.invoke_async("go")

    assert paused.status == Status.INTERRUPTED
    assert {i.id for i in paused.interrupts} == {expected_id("b"), expected_id("c")}
    assert len(paused.interrupts) == 2  # same tool-use id "t1" and name in both agents, still two ids
    assert {i.reason["resource"] for i in paused.interrupts} == {"rb", "rc"}
    assert paused.results["b"].status == paused.results["c"].status == Status.INTERRUPTED
    assert paused.results["a"].status == Status.COMPLETED
    assert "d" not in paused.results
    assert calls(models) == {"a": 1, "b": 1, "c": 1, "d": 0}

    by_resource = {i.reason["resource"]: i for i in paused.interrupts}
    done = await graph.invoke_async([answer(by_resource["rb"], "y"), answer(by_resource["rc"], "n")])

    assert done.status == Status.COMPLETED
    assert sorted(runs) == [("rb", "y"), ("rc", "n")]  # each answer reached the node that asked
    assert calls(models) == {"a": 1, "b": 2, "c": 2, "d": 1}
    executed = [n.node_id for n in done.execution_order]
    assert (executed[0], executed[-1]) == ("a", "d")
    assert done.completed_nodes == 4
    d_prompt = str(models["d"].requests[0].messages[0])
    assert "b done" in d_prompt
    assert "c done" in d_prompt


@pytest.mark.parametrize("fan_in", ["all", "any"])
async def test_answering_one_of_two_parallel_interrupts_leaves_the_other_waiting(fan_in: str) -> None:
    graph, models, runs = diamond(fan_in)
    paused = await graph.invoke_async("go")
    by_node = {i.reason["resource"]: i for i in paused.interrupts}

    partial = await graph.invoke_async([answer(by_node["rb"], "y")])

    assert partial.status == Status.INTERRUPTED
    assert [i.id for i in partial.interrupts] == [expected_id("c")]
    assert partial.results["b"].status == Status.COMPLETED
    assert partial.results["c"].status == Status.INTERRUPTED
    assert "d" not in partial.results  # d waits for c whatever its fan-in: b and c form one batch
    assert runs == [("rb", "y")]
    assert calls(models) == {"a": 1, "b": 2, "c": 1, "d": 0}

    done = await graph.invoke_async([answer(by_node["rc"], "y")])

    assert done.status == Status.COMPLETED
    assert runs == [("rb", "y"), ("rc", "y")]
    assert calls(models) == {"a": 1, "b": 2, "c": 2, "d": 1}  # b was not run again, d ran once
    assert [n.node_id for n in done.execution_order] == ["a", "b", "c", "d"]
    assert done.execution_count == 4


async def test_a_node_that_completed_beside_an_interrupted_one_is_not_run_again() -> None:
    runs: list[tuple[str, Any]] = []
    a, model_a = text_agent("a")
    b, model_b = tool_agent("b", "rb", runs)
    c, model_c = text_agent("c")
    d, model_d = text_agent("d")
    builder = GraphBuilder()
    for node_id, node in (("a", a), ("b", b), ("c", c)):
        builder.add_node(node, node_id)
    builder.add_node(d, "d", fan_in="all")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge("b", "d")
    builder.add_edge("c", "d")
    graph = builder.build()

    paused = await graph.invoke_async("go")
    assert paused.results["c"].status == Status.COMPLETED
    assert [i.id for i in paused.interrupts] == [expected_id("b")]

    done = await graph.invoke_async(answers(paused.interrupts, "y"))

    assert done.status == Status.COMPLETED
    assert (model_a.calls, model_b.calls, model_c.calls, model_d.calls) == (1, 2, 1, 1)
    assert [n.node_id for n in done.execution_order] == ["a", "c", "b", "d"]


async def test_a_node_raising_two_interrupts_in_one_tool_batch_gets_both_answers() -> None:
    runs: list[tuple[str, Any]] = []
    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "t1", "name": "cleanup", "input": {"resource": "x"}}},
                    {"toolUse": {"toolUseId": "t2", "name": "cleanup", "input": {"resource": "y"}}},
                ],
            },
            text("both handled"),
        ]
    )
    worker = Agent(name="worker", model=model, tools=[approval_tool(runs)], callback_handler=None)
    swarm = Swarm([worker])

    paused = await swarm.invoke_async("go")

    assert [i.id for i in paused.interrupts] == [expected_id("worker", "t1"), expected_id("worker", "t2")]
    done = await swarm.invoke_async([answer(paused.interrupts[0], "y"), answer(paused.interrupts[1], "n")])
    assert done.status == Status.COMPLETED
    assert sorted(runs) == [("x", "y"), ("y", "n")]
    assert model.calls == 2


# -- interrupts from a node agent's own hooks ---------------------------------------------------------------------


class AgentApproval(HookProvider):
    """A single-agent approval hook (`BeforeToolCallEvent`), registered on the node's agent."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.interrupt("tool-approval", reason=event.tool_use["input"]) != "y":
            event.cancel_tool = "denied by user"


class ModelGate(HookProvider):
    """Interrupts before every model call of the node's agent until answered."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, lambda event: event.interrupt("model-gate"))


@tool
def wipe(target: str) -> str:
    """Wipe a target.

    Args:
        target: The target.
    """
    return f"wiped {target}"


@pytest.mark.parametrize("kind", ["graph", "swarm"])
async def test_a_node_agents_before_tool_call_hook_interrupts_the_orchestration(kind: str) -> None:
    model = ScriptedModel([tool_call("wipe", tool_use_id="w1", target="disk"), text("wiped")])
    worker = Agent(name="worker", model=model, tools=[wipe], hooks=[AgentApproval()], callback_handler=None)
    if kind == "graph":
        builder = GraphBuilder()
        builder.add_node(worker, "worker")
        orchestrator: Any = builder.build()
    else:
        orchestrator = Swarm([worker])

    paused = await orchestrator.invoke_async("go")

    [interrupt] = paused.interrupts
    assert interrupt.id == f"v1:node:{name_uuid('worker')}:v1:before_tool_call:w1:{name_uuid('tool-approval')}"
    assert interrupt.reason == {"target": "disk"}
    done = await orchestrator.invoke_async([answer(interrupt, "y")])
    assert done.status == Status.COMPLETED
    assert tool_results(worker)[0]["content"] == [{"text": "wiped disk"}]
    assert model.calls == 2


async def test_a_node_agents_before_model_call_hook_interrupts_and_the_model_is_called_on_resume() -> None:
    model = ScriptedModel([text("answer")])
    worker = Agent(name="worker", model=model, hooks=[ModelGate()], callback_handler=None)
    builder = GraphBuilder()
    builder.add_node(worker, "worker")
    graph = builder.build()

    paused = await graph.invoke_async("go")
    assert paused.status == Status.INTERRUPTED
    assert model.calls == 0

    done = await graph.invoke_async(answers(paused.interrupts, "ok"))
    assert done.status == Status.COMPLETED
    assert model.calls == 1


async def test_invocation_state_reaches_node_hooks_and_node_tools_without_being_mutated() -> None:
    seen: dict[str, Any] = {}

    @tool(context=True)
    def whoami(tool_context: ToolContext) -> str:
        """Report the user."""
        seen["tool"] = tool_context.invocation_state.get("user")
        return "ok"

    class Before(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, self.before)

        def before(self, event: BeforeNodeCallEvent) -> None:
            seen["hook"] = (event.invocation_state or {}).get("user")

    model = ScriptedModel([tool_call("whoami", tool_use_id="w1"), text("done")])
    worker = Agent(name="worker", model=model, tools=[whoami], callback_handler=None)
    swarm = Swarm([worker], hooks=[Before()])
    invocation_state = {"user": "alice"}

    result = await swarm.invoke_async("go", invocation_state)

    assert result.status == Status.COMPLETED
    assert seen == {"hook": "alice", "tool": "alice"}
    assert invocation_state == {"user": "alice"}


# -- interrupted nodes beside failed and denied ones --------------------------------------------------------------


async def test_a_failure_beside_an_interrupted_node_makes_the_resumed_run_fail() -> None:
    runs: list[tuple[str, Any]] = []
    b, model_b = tool_agent("b", "rb", runs)
    broken = Agent(name="c", model=ScriptedModel([RuntimeError("boom")]), callback_handler=None)
    d, model_d = text_agent("d")
    e, model_e = text_agent("e")
    builder = GraphBuilder()
    builder.add_node(b, "b")
    builder.add_node(broken, "c")
    builder.add_node(d, "d", fan_in="all")
    builder.add_node(e, "e")
    builder.add_edge("b", "d")
    builder.add_edge("c", "d")
    builder.add_edge("b", "e")
    graph = builder.build()

    paused = await graph.invoke_async("go")

    assert paused.status == Status.INTERRUPTED  # waiting on b; c already failed
    assert paused.results["c"].status == Status.FAILED
    assert (paused.failed_nodes, paused.interrupted_nodes) == (1, 1)

    done = await graph.invoke_async(answers(paused.interrupts, "y"))

    assert done.status == Status.FAILED
    assert done.results["b"].status == Status.COMPLETED
    assert done.results["c"].status == Status.FAILED
    assert done.results["e"].status == Status.COMPLETED  # b's independent successor ran
    assert "d" not in done.results  # needs the failed c
    assert (model_b.calls, model_d.calls, model_e.calls) == (2, 0, 1)


async def test_parallel_hook_approvals_one_denied() -> None:
    class Approve(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, self.approve)

        def approve(self, event: BeforeNodeCallEvent) -> None:
            if event.node_id in ("b", "c") and event.interrupt("approval", reason=event.node_id) != "y":
                event.cancel_node = f"{event.node_id} denied"

    a, _ = text_agent("a")
    b, model_b = text_agent("b")
    c, model_c = text_agent("c")
    after_b, model_after_b = text_agent("after_b")
    join, model_join = text_agent("join")
    builder = GraphBuilder()
    for node_id, executor in (("a", a), ("b", b), ("c", c), ("after_b", after_b)):
        builder.add_node(executor, node_id)
    builder.add_node(join, "join", fan_in="all")
    for source, target in (("a", "b"), ("a", "c"), ("b", "after_b"), ("b", "join"), ("c", "join")):
        builder.add_edge(source, target)
    builder.set_hook_providers([Approve()])
    graph = builder.build()

    paused = await graph.invoke_async("go")
    by_node = {i.reason: i for i in paused.interrupts}
    done = await graph.invoke_async([answer(by_node["b"], "y"), answer(by_node["c"], "n")])

    assert done.status == Status.FAILED
    assert str(done.results["c"].result) == "c denied"
    assert done.results["after_b"].status == Status.COMPLETED
    assert "join" not in done.results
    assert (model_b.calls, model_c.calls, model_after_b.calls, model_join.calls) == (1, 0, 1, 0)


async def test_answering_one_of_two_interrupts_of_one_node_keeps_the_node_waiting() -> None:
    runs: list[tuple[str, Any]] = []
    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "t1", "name": "cleanup", "input": {"resource": "x"}}},
                    {"toolUse": {"toolUseId": "t2", "name": "cleanup", "input": {"resource": "y"}}},
                ],
            },
            text("both handled"),
        ]
    )
    worker = Agent(name="worker", model=model, tools=[approval_tool(runs)], callback_handler=None)
    builder = GraphBuilder()
    builder.add_node(worker, "worker")
    graph = builder.build()
    paused = await graph.invoke_async("go")
    first, second = paused.interrupts

    partial = await graph.invoke_async([answer(first, "y")])

    assert partial.status == Status.INTERRUPTED
    assert [i.id for i in partial.interrupts] == [second.id]
    assert runs == [("x", "y")]  # the answered tool ran and its result is kept
    assert model.calls == 1

    done = await graph.invoke_async([answer(second, "n")])

    assert done.status == Status.COMPLETED
    assert runs == [("x", "y"), ("y", "n")]
    assert model.calls == 2
    assert [r["toolUseId"] for r in tool_results(worker)] == ["t1", "t2"]


@pytest.mark.parametrize(("fan_in", "d_runs"), [("any", 2), ("all", 1)])
async def test_a_resumed_run_schedules_like_a_live_run(fan_in: str, d_runs: int) -> None:
    """a → b → d and a → d, with b asking for approval; d runs as often as in a run without the interrupt."""

    def build(ask: bool) -> tuple[Any, dict[str, ScriptedModel]]:
        runs: list[tuple[str, Any]] = []
        a, model_a = text_agent("a")
        if ask:
            b, model_b = tool_agent("b", "rb", runs)
        else:
            b, model_b = text_agent("b")
        d, model_d = text_agent("d", *[f"d run {n}" for n in range(3)])
        builder = GraphBuilder()
        builder.add_node(a, "a")
        builder.add_node(b, "b")
        builder.add_node(d, "d", fan_in=fan_in)
        builder.add_edge("a", "b")
        builder.add_edge("b", "d")
        builder.add_edge("a", "d")
        return builder.build(), {"a": model_a, "b": model_b, "d": model_d}

    live_graph, live_models = build(ask=False)
    live = await live_graph.invoke_async("go")
    paused_graph, models = build(ask=True)
    paused = await paused_graph.invoke_async("go")
    resumed = await paused_graph.invoke_async(answers(paused.interrupts, "y"))

    assert live.status == resumed.status == Status.COMPLETED
    assert live_models["d"].calls == models["d"].calls == d_runs
    assert sorted(n.node_id for n in live.execution_order) == sorted(n.node_id for n in resumed.execution_order)


async def test_an_adopted_interrupt_keeps_the_details_given_by_the_node() -> None:
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        """Ask for confirmation."""
        return str(
            tool_context.interrupt("q", message="Delete the db?", metadata={"risk": "high"}, kind="confirmation")
        )

    model = ScriptedModel([tool_call("ask", tool_use_id="a1"), text("done")])
    swarm = Swarm([Agent(name="worker", model=model, tools=[ask], callback_handler=None)])

    paused = await swarm.invoke_async("go")

    [interrupt] = paused.interrupts
    assert interrupt.id.startswith("v1:node:")
    assert interrupt.message == "Delete the db?"
    # The orchestrator adds the node the interrupt came from.
    assert (interrupt.metadata, interrupt.kind, interrupt.tool_use_id) == (
        {"risk": "high", "node_id": "worker"},
        "confirmation",
        "a1",
    )
