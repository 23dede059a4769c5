"""Graph failures (timeouts, exceptions), the order of streamed events and hooks, and real concurrency."""

import time
from contextlib import aclosing
from typing import Any

import anyio
from helpers import answers

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import (
    AfterMultiAgentInvocationEvent,
    AfterNodeCallEvent,
    BeforeMultiAgentInvocationEvent,
    BeforeNodeCallEvent,
    HookProvider,
    HookRegistry,
    MultiAgentInitializedEvent,
)
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, Status


def agent(name: str, *turns: Any, delay: float = 0.0) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(list(turns) or [text(f"{name} done")], delay=delay)
    return Agent(name=name, model=model, callback_handler=None), model


def graph(*edges: tuple[str, str], **executors: Agent) -> GraphBuilder:
    builder = GraphBuilder()
    for node_id, executor in executors.items():
        builder.add_node(executor, node_id)
    for source, target in edges:
        builder.add_edge(source, target)
    return builder


# -- timeouts -------------------------------------------------------------------------------------------------------


async def test_a_node_timeout_fails_that_node_and_the_independent_branch_completes() -> None:
    slow, slow_model = agent("slow", delay=2.0)
    after_slow, after_slow_model = agent("after_slow")
    fast, fast_model = agent("fast", delay=0.01)
    after_fast, _ = agent("after_fast")
    builder = graph(
        ("slow", "after_slow"),
        ("fast", "after_fast"),
        slow=slow,
        after_slow=after_slow,
        fast=fast,
        after_fast=after_fast,
    )
    builder.set_node_timeout(0.2)
    started = time.perf_counter()

    result = await builder.build().invoke_async("go")

    assert time.perf_counter() - started < 1.5
    assert result.status == Status.FAILED
    node = result.results["slow"]
    assert node.status == Status.FAILED
    assert isinstance(node.result, TimeoutError)
    assert str(node.result) == "Node 'slow' execution timed out after 0.2s"
    assert "after_slow" not in result.results
    assert after_slow_model.calls == 0
    assert result.results["fast"].status == Status.COMPLETED
    assert result.results["after_fast"].status == Status.COMPLETED
    assert (result.completed_nodes, result.failed_nodes) == (2, 1)
    assert slow_model.calls == fast_model.calls == 1
    # The timed-out agent was released: it can run again.
    assert slow._invocation_lock.acquire(blocking=False)
    slow._invocation_lock.release()


async def test_the_execution_timeout_fails_the_run() -> None:
    slow, _ = agent("slow", delay=2.0)
    first, _ = agent("first")
    builder = graph(("first", "slow"), first=first, slow=slow)
    builder.set_execution_timeout(0.2)
    started = time.perf_counter()

    result = await builder.build().invoke_async("go")

    assert time.perf_counter() - started < 1.5
    assert result.status == Status.FAILED
    assert result.results["first"].status == Status.COMPLETED
    assert result.results["slow"].status == Status.FAILED
    assert "timed out" in str(result.results["slow"].result)


async def test_a_run_that_already_exceeded_its_execution_timeout_does_not_start_another_batch() -> None:
    a, _ = agent("a", delay=0.15)
    b, b_model = agent("b")
    builder = graph(("a", "b"), a=a, b=b)
    builder.set_execution_timeout(0.1)
    result = await builder.build().invoke_async("go")
    assert result.status == Status.FAILED
    assert b_model.calls == 0


# -- exceptions -----------------------------------------------------------------------------------------------------


async def test_a_node_whose_model_raises_fails_alone_and_the_graph_returns() -> None:
    broken, broken_model = agent("broken", RuntimeError("model exploded"))
    successor, successor_model = agent("successor")
    other, other_model = agent("other")
    other_next, other_next_model = agent("other_next")
    builder = graph(
        ("broken", "successor"),
        ("other", "other_next"),
        broken=broken,
        successor=successor,
        other=other,
        other_next=other_next,
    )
    events: list[str] = []

    class After(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(AfterNodeCallEvent, lambda event: events.append(event.node_id))

    builder.set_hook_providers([After()])

    result = await builder.build().invoke_async("go")

    assert result.status == Status.FAILED
    node = result.results["broken"]
    assert node.status == Status.FAILED
    assert isinstance(node.result, RuntimeError)
    assert str(node.result) == "model exploded"
    assert set(result.results) == {"broken", "other", "other_next"}
    assert successor_model.calls == 0
    assert (broken_model.calls, other_model.calls, other_next_model.calls) == (1, 1, 1)
    assert sorted(events) == ["broken", "other", "other_next"]  # AfterNodeCallEvent fires for a failed node


async def test_a_tool_exception_does_not_fail_the_node() -> None:
    @tool
    def explode() -> str:
        """Raise."""
        raise RuntimeError("tool exploded")

    model = ScriptedModel([tool_call("explode", tool_use_id="e1"), text("recovered")])
    worker = Agent(name="worker", model=model, tools=[explode], callback_handler=None)
    result = await graph(worker=worker).build().invoke_async("go")
    assert result.status == Status.COMPLETED
    assert result.results["worker"].result.message["content"] == [{"text": "recovered"}]


# -- streaming and hook order ---------------------------------------------------------------------------------------


class Recorder(HookProvider):
    """Async hooks that first let the stream consumer catch up, so their entries interleave exactly."""

    def __init__(self, log: list[tuple[str, Any]]) -> None:
        self.log = log

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        for event_type in (
            MultiAgentInitializedEvent,
            BeforeMultiAgentInvocationEvent,
            BeforeNodeCallEvent,
            AfterNodeCallEvent,
            AfterMultiAgentInvocationEvent,
        ):
            registry.add_callback(event_type, self.record)

    async def record(self, event: Any) -> None:
        await anyio.wait_all_tasks_blocked()
        self.log.append((type(event).__name__, getattr(event, "node_id", None)))


async def test_stream_async_orders_events_and_hooks_per_node() -> None:
    first, _ = agent("first")
    second, _ = agent("second", tool_call("noop", tool_use_id="n1"), text("second done"))

    @tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    second.tool_registry.register_tool(noop)
    log: list[tuple[str, Any]] = []
    builder = graph(("first", "second"), first=first, second=second)
    builder.set_hook_providers([Recorder(log)])
    built = builder.build()
    assert log == [("MultiAgentInitializedEvent", None)]
    log.clear()

    async for event in built.stream_async("go"):
        log.append((event["type"], event.get("node_id")))

    collapsed: list[tuple[str, Any]] = []
    for entry in log:  # collapse runs of node stream events
        if not (collapsed and entry[0] == "multiagent_node_stream" and collapsed[-1] == entry):
            collapsed.append(entry)
    assert collapsed == [
        ("BeforeMultiAgentInvocationEvent", None),
        ("multiagent_node_start", "first"),
        ("BeforeNodeCallEvent", "first"),
        ("multiagent_node_stream", "first"),
        ("multiagent_node_stop", "first"),
        ("AfterNodeCallEvent", "first"),
        ("multiagent_node_start", "second"),
        ("BeforeNodeCallEvent", "second"),
        ("multiagent_node_stream", "second"),
        ("multiagent_node_stop", "second"),
        ("AfterNodeCallEvent", "second"),
        ("AfterMultiAgentInvocationEvent", None),
        ("multiagent_result", None),
    ]


async def test_stream_events_carry_node_events_results_and_the_final_result() -> None:
    first, _ = agent("first")
    built = graph(first=first).build()

    events = [event async for event in built.stream_async("go")]

    start, *streamed, stop, final = events
    assert start == {"type": "multiagent_node_start", "node_id": "first", "node_type": "agent"}
    assert all(event["type"] == "multiagent_node_stream" for event in streamed)
    assert any(event["event"].get("data") == "first done" for event in streamed)
    assert stop["node_result"].status == Status.COMPLETED
    assert final["type"] == "multiagent_result"
    assert final["result"].status == Status.COMPLETED
    assert final["result"].results["first"] is stop["node_result"]


async def test_a_nodes_final_result_event_is_forwarded_like_strands() -> None:
    first, _ = agent("first")
    events = [event async for event in graph(first=first).build().stream_async("go")]
    inner = [event["event"] for event in events if event["type"] == "multiagent_node_stream"]
    assert any("result" in event for event in inner)


async def test_a_node_agents_callback_handler_still_receives_its_events() -> None:
    received: list[dict[str, Any]] = []
    model = ScriptedModel([text("hello")])
    worker = Agent(name="worker", model=model, callback_handler=lambda **event: received.append(event))
    result = await graph(worker=worker).build().invoke_async("go")
    assert result.status == Status.COMPLETED
    assert any(event.get("data") == "hello" for event in received)


async def test_stream_async_ends_with_interrupts_and_resumes_with_stream_async() -> None:
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        """Ask."""
        return str(tool_context.interrupt("q"))

    model = ScriptedModel([tool_call("ask", tool_use_id="q1"), text("answered")])
    worker = Agent(name="worker", model=model, tools=[ask], callback_handler=None)
    built = graph(worker=worker).build()

    paused = [event async for event in built.stream_async("go")][-1]["result"]
    resumed = [event async for event in built.stream_async(answers(paused.interrupts, "42"))]

    assert resumed[0]["type"] == "multiagent_node_start"
    assert resumed[-1]["result"].status == Status.COMPLETED
    assert model.calls == 2


async def test_stream_async_can_be_left_early_with_aclosing() -> None:
    slow, _ = agent("slow", text("first"), text("second"), delay=0.05)
    built = graph(slow=slow).build()
    async with aclosing(built.stream_async("go")) as stream:
        async for event in stream:
            assert event["type"] == "multiagent_node_start"
            break
    # Leaving early released the graph and its agent.
    assert (await built.invoke_async("again")).status == Status.COMPLETED


# -- concurrency ----------------------------------------------------------------------------------------------------


async def test_ready_nodes_run_concurrently() -> None:
    left, _ = agent("left", delay=0.2)
    right, _ = agent("right", delay=0.2)
    built = graph(left=left, right=right).build()
    started = time.perf_counter()

    result = await built.invoke_async("go")

    elapsed = time.perf_counter() - started
    assert result.status == Status.COMPLETED
    assert elapsed < 0.38, f"two 0.2 s nodes took {elapsed:.3f} s: they did not overlap"


async def test_a_fan_out_of_parallel_nodes_runs_concurrently() -> None:
    root, _ = agent("root")
    executors: dict[str, Agent] = {"root": root}
    for index in range(8):
        executors[f"leaf{index}"], _ = agent(f"leaf{index}", delay=0.15)
    built = graph(*[("root", f"leaf{index}") for index in range(8)], **executors).build()
    started = time.perf_counter()
    result = await built.invoke_async("go")
    assert time.perf_counter() - started < 0.6
    assert result.completed_nodes == 9
