"""Interrupts raised by `BeforeNodeCallEvent` hooks, in Graph and Swarm: the rules of the interrupts guide."""

from collections.abc import Callable
from typing import Any

import pytest
from helpers import answer, answers

from strandslike import Agent
from strandslike.hooks import AfterNodeCallEvent, BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, MultiAgentBase, Status, Swarm


class Callbacks(HookProvider):
    """Registers plain callbacks for `BeforeNodeCallEvent` and records `AfterNodeCallEvent`s."""

    def __init__(self, *callbacks: Callable[[BeforeNodeCallEvent], None]) -> None:
        self.callbacks = callbacks
        self.after: list[str] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        for callback in self.callbacks:
            registry.add_callback(BeforeNodeCallEvent, callback)
        registry.add_callback(AfterNodeCallEvent, lambda event: self.after.append(event.node_id))


def agent(name: str, *replies: str) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([text(reply) for reply in replies])
    return Agent(name=name, model=model, callback_handler=None), model


def one_node(kind: str, hooks: Callbacks, *replies: str) -> tuple[MultiAgentBase, ScriptedModel]:
    worker, model = agent("worker", *replies)
    if kind == "swarm":
        return Swarm([worker], hooks=[hooks]), model
    builder = GraphBuilder()
    builder.add_node(worker, "worker")
    builder.set_hook_providers([hooks])
    return builder.build(), model


KINDS = ["graph", "swarm"]


@pytest.mark.parametrize("kind", KINDS)
async def test_every_hook_runs_and_all_their_interrupts_come_back_together(kind: str) -> None:
    calls: list[str] = []

    def first(event: BeforeNodeCallEvent) -> None:
        calls.append("first")
        if event.interrupt("first-approval", reason={"hook": 1}) != "y":
            event.cancel_node = "first said no"

    def observer(event: BeforeNodeCallEvent) -> None:
        calls.append("observer")

    def second(event: BeforeNodeCallEvent) -> None:
        calls.append("second")
        if event.interrupt("second-approval", reason={"hook": 2}) != "y":
            event.cancel_node = "second said no"

    hooks = Callbacks(first, observer, second)
    orchestrator, model = one_node(kind, hooks, "done")

    paused = await orchestrator.invoke_async("task")

    assert paused.status == Status.INTERRUPTED
    assert calls == ["first", "observer", "second"]  # the first interrupt did not stop the other hooks
    assert [(i.name, i.reason) for i in paused.interrupts] == [
        ("first-approval", {"hook": 1}),
        ("second-approval", {"hook": 2}),
    ]
    assert len({i.id for i in paused.interrupts}) == 2
    assert all(i.id.startswith("v1:before_node_call:") for i in paused.interrupts)
    assert paused.results["worker"].status == Status.INTERRUPTED
    assert hooks.after == []  # AfterNodeCallEvent does not fire for an interrupted node
    assert model.calls == 0

    done = await orchestrator.invoke_async(answers(paused.interrupts, "y"))

    assert done.status == Status.COMPLETED
    assert calls == ["first", "observer", "second"] * 2
    assert hooks.after == ["worker"]
    assert model.calls == 1
    assert done.results["worker"].result.message["content"] == [{"text": "done"}]


@pytest.mark.parametrize("kind", KINDS)
async def test_answering_only_some_hook_interrupts_keeps_the_others_open(kind: str) -> None:
    def first(event: BeforeNodeCallEvent) -> None:
        event.interrupt("first")

    def second(event: BeforeNodeCallEvent) -> None:
        event.interrupt("second")

    orchestrator, model = one_node(kind, Callbacks(first, second), "done")
    paused = await orchestrator.invoke_async("task")
    first_interrupt, second_interrupt = paused.interrupts

    still = await orchestrator.invoke_async([answer(first_interrupt, "ok")])

    assert still.status == Status.INTERRUPTED
    assert [i.id for i in still.interrupts] == [second_interrupt.id]
    assert model.calls == 0

    done = await orchestrator.invoke_async([answer(second_interrupt, "ok")])
    assert done.status == Status.COMPLETED
    assert model.calls == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_a_hook_interrupts_again_after_its_answer(kind: str) -> None:
    seen: list[Any] = []

    def two_step(event: BeforeNodeCallEvent) -> None:
        seen.append(event.interrupt("confirm", reason="step 1"))
        seen.append(event.interrupt("double-confirm", reason="step 2"))

    orchestrator, model = one_node(kind, Callbacks(two_step), "done")

    first = await orchestrator.invoke_async("task")
    assert first.status == Status.INTERRUPTED
    assert [(i.name, i.reason) for i in first.interrupts] == [("confirm", "step 1")]

    second = await orchestrator.invoke_async(answers(first.interrupts, "yes"))
    assert second.status == Status.INTERRUPTED
    assert [(i.name, i.reason) for i in second.interrupts] == [("double-confirm", "step 2")]
    assert second.interrupts[0].id != first.interrupts[0].id
    assert model.calls == 0

    done = await orchestrator.invoke_async(answers(second.interrupts, "really"))
    assert done.status == Status.COMPLETED
    assert seen == ["yes", "yes", "really"]
    assert model.calls == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_a_preemptive_response_does_not_pause(kind: str) -> None:
    seen: list[Any] = []

    def preapproved(event: BeforeNodeCallEvent) -> None:
        seen.append(event.interrupt("approval", reason="r", response="y"))

    orchestrator, model = one_node(kind, Callbacks(preapproved), "done")

    result = await orchestrator.invoke_async("task")

    assert result.status == Status.COMPLETED
    assert result.interrupts == []
    assert seen == ["y"]
    assert model.calls == 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("cancel", "message"), [(True, "node cancelled by user"), ("custom no", "custom no")])
async def test_cancel_node_fails_the_node_with_its_message(kind: str, cancel: bool | str, message: str) -> None:
    def deny(event: BeforeNodeCallEvent) -> None:
        event.cancel_node = cancel

    hooks = Callbacks(deny)
    orchestrator, model = one_node(kind, hooks, "never")

    result = await orchestrator.invoke_async("task")

    assert result.status == Status.FAILED
    node = result.results["worker"]
    assert node.status == Status.FAILED
    assert str(node.result) == message
    assert model.calls == 0
    assert hooks.after == ["worker"]  # a cancelled node is finished: AfterNodeCallEvent fires


@pytest.mark.parametrize("kind", KINDS)
async def test_cancel_after_an_answer_emits_a_cancel_event(kind: str) -> None:
    def approve(event: BeforeNodeCallEvent) -> None:
        if event.interrupt("approval") != "y":
            event.cancel_node = True

    orchestrator, model = one_node(kind, Callbacks(approve), "never")
    paused = await orchestrator.invoke_async("task")

    events = [event async for event in orchestrator.stream_async(answers(paused.interrupts, "n"))]

    cancel = [event for event in events if event["type"] == "multiagent_node_cancel"]
    assert cancel == [{"type": "multiagent_node_cancel", "node_id": "worker", "message": "node cancelled by user"}]
    final = events[-1]
    assert final["type"] == "multiagent_result"
    assert final["result"].status == Status.FAILED
    assert model.calls == 0


async def test_hook_interrupts_on_two_parallel_graph_nodes_are_returned_together() -> None:
    def approve_all(event: BeforeNodeCallEvent) -> None:
        if event.node_id != "a":
            event.interrupt("approval", reason=event.node_id)

    a, model_a = agent("a", "a done")
    b, model_b = agent("b", "b done")
    c, model_c = agent("c", "c done")
    builder = GraphBuilder()
    for node_id, node_agent in (("a", a), ("b", b), ("c", c)):
        builder.add_node(node_agent, node_id)
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.set_hook_providers([Callbacks(approve_all)])
    graph = builder.build()

    paused = await graph.invoke_async("task")

    assert paused.status == Status.INTERRUPTED
    assert sorted(i.reason for i in paused.interrupts) == ["b", "c"]
    assert len({i.id for i in paused.interrupts}) == 2  # same interrupt name, different nodes: distinct ids

    done = await graph.invoke_async(answers(paused.interrupts, "y"))

    assert done.status == Status.COMPLETED
    assert (model_a.calls, model_b.calls, model_c.calls) == (1, 1, 1)


async def test_a_swarm_hook_runs_again_for_a_revisited_node() -> None:
    # After a node proceeds, its answered hook interrupt is spent: a later visit to the same node asks again.
    asked: list[str] = []

    def approve(event: BeforeNodeCallEvent) -> None:
        if event.node_id == "a":
            asked.append("a")
            event.interrupt("approval")

    model_a = ScriptedModel(
        [tool_call("handoff_to_agent", agent_name="b", message="over"), text("handed to b"), text("a final")]
    )
    model_b = ScriptedModel([tool_call("handoff_to_agent", agent_name="a", message="back"), text("handed to a")])
    swarm = Swarm(
        [
            Agent(name="a", model=model_a, callback_handler=None),
            Agent(name="b", model=model_b, callback_handler=None),
        ],
        hooks=[Callbacks(approve)],
    )

    first = await swarm.invoke_async("task")
    assert first.status == Status.INTERRUPTED
    second = await swarm.invoke_async(answers(first.interrupts, "y"))

    assert second.status == Status.INTERRUPTED  # a's second visit asks again
    assert second.interrupts[0].id == first.interrupts[0].id  # same node, same name: the same deterministic id
    assert [node.node_id for node in second.node_history] == ["a", "b"]

    done = await swarm.invoke_async(answers(second.interrupts, "y"))
    assert done.status == Status.COMPLETED
    assert [node.node_id for node in done.node_history] == ["a", "b", "a"]
    assert (model_a.calls, model_b.calls) == (3, 2)
    assert asked == ["a", "a", "a", "a"]  # two visits, each asked once and re-run once with the answer


# -- hook exceptions ------------------------------------------------------------------------------------------------


def raising(event: Any) -> None:
    raise ValueError(f"hook failed on {event.node_id}")


class Raises(HookProvider):
    def __init__(self, event_type: type) -> None:
        self.event_type = event_type

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(self.event_type, raising)


@pytest.mark.parametrize("event_type", [BeforeNodeCallEvent, AfterNodeCallEvent])
async def test_a_swarm_hook_exception_propagates_with_its_own_type_and_releases_the_swarm(event_type: type) -> None:
    worker, _ = agent("worker", "one", "two")
    swarm = Swarm([worker], hooks=[Raises(event_type)])
    for _ in range(2):  # the second call is not refused as concurrent: the first released the swarm
        with pytest.raises(ValueError, match="hook failed on worker"):
            await swarm.invoke_async("task")


@pytest.mark.parametrize("event_type", [BeforeNodeCallEvent, AfterNodeCallEvent])
async def test_a_graph_hook_exception_propagates_with_its_own_type(event_type: type) -> None:
    worker, _ = agent("worker", "one", "two")
    builder = GraphBuilder()
    builder.add_node(worker, "worker")
    builder.set_hook_providers([Raises(event_type)])
    graph = builder.build()
    with pytest.raises(ValueError, match="hook failed on worker"):
        await graph.invoke_async("task")
