"""Bad resumes of an orchestration get an agent's typed errors and leave it interrupted and resumable."""

import threading
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from helpers import answer, answers

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.interrupt import (
    DuplicateInterruptResponseError,
    InterruptAlreadyAnsweredError,
    InterruptError,
    InvalidResumeError,
    NotInterruptedError,
    PendingInterruptsError,
    UnknownInterruptError,
)
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, MultiAgentBase, Status, Swarm
from strandslike.types.exceptions import ConcurrencyException, NotJSONSerializableError


@tool(context=True)
def cleanup(resource: str, tool_context: ToolContext) -> str:
    """Clean up a resource after approval.

    Args:
        resource: The resource.
    """
    return f"{resource}: {tool_context.interrupt('approval', reason={'resource': resource})}"


class Approve(HookProvider):
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.interrupt("node-approval", reason=event.node_id) != "y":
            event.cancel_node = True


def tool_agent(name: str, resource: str) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([tool_call("cleanup", tool_use_id="t1", resource=resource), text(f"{name} done")])
    return Agent(name=name, model=model, tools=[cleanup], callback_handler=None), model


def parallel_graph() -> tuple[MultiAgentBase, list[ScriptedModel]]:
    """Two entry nodes that both interrupt from a tool."""
    b, model_b = tool_agent("b", "rb")
    c, model_c = tool_agent("c", "rc")
    builder = GraphBuilder()
    builder.add_node(b, "b")
    builder.add_node(c, "c")
    return builder.build(), [model_b, model_c]


def hook_swarm() -> tuple[MultiAgentBase, list[ScriptedModel]]:
    model = ScriptedModel([text("done")])
    return Swarm([Agent(name="worker", model=model, callback_handler=None)], hooks=[Approve()]), [model]


def tool_swarm() -> tuple[MultiAgentBase, list[ScriptedModel]]:
    worker, model = tool_agent("worker", "db")
    return Swarm([worker]), [model]


def nested_graph() -> tuple[MultiAgentBase, list[ScriptedModel]]:
    inner, models = parallel_graph()
    builder = GraphBuilder()
    builder.add_node(inner, "inner")
    return builder.build(), models


BUILDERS: dict[str, Callable[[], tuple[MultiAgentBase, list[ScriptedModel]]]] = {
    "graph-tools": parallel_graph,
    "swarm-hook": hook_swarm,
    "swarm-tool": tool_swarm,
    "nested-graph": nested_graph,
}


def bad_resumes(interrupts: list[Any]) -> list[tuple[Any, type[Exception]]]:
    first = interrupts[0]
    return [
        ("a new prompt", PendingInterruptsError),
        ([{"text": "a new prompt"}], PendingInterruptsError),
        ([answer(first, "y"), {"text": "and more"}], PendingInterruptsError),
        ([{"interruptResponse": {"interruptId": "v1:node:nope", "response": "y"}}], UnknownInterruptError),
        ([answer(first, "y"), {"interruptResponse": {"interruptId": "nope", "response": "y"}}], UnknownInterruptError),
        ([answer(first, "y"), answer(first, "y")], DuplicateInterruptResponseError),
        ([{"interruptResponse": {"interruptId": first.id}}], InvalidResumeError),
        ([answer(first, {1, 2})], NotJSONSerializableError),
    ]


@pytest.mark.parametrize("kind", sorted(BUILDERS))
async def test_bad_resumes_raise_typed_errors_and_leave_the_run_resumable(kind: str) -> None:
    orchestrator, models = BUILDERS[kind]()
    paused = await orchestrator.invoke_async("go")
    assert paused.status == Status.INTERRUPTED
    calls_before = [model.calls for model in models]

    for prompt, error in bad_resumes(paused.interrupts):
        with pytest.raises(error):
            await orchestrator.invoke_async(prompt)
        # Nothing was applied: the same interrupts are still open, nothing ran.
        assert [i.id for i in orchestrator.pending_interrupts] == [i.id for i in paused.interrupts]
        assert all(not i.answered for i in orchestrator.pending_interrupts)
        assert [model.calls for model in models] == calls_before

    done = await orchestrator.invoke_async(answers(paused.interrupts, "y"))
    assert done.status == Status.COMPLETED
    assert done.interrupts == []


async def test_error_types_keep_their_builtin_bases() -> None:
    orchestrator, _ = parallel_graph()
    paused = await orchestrator.invoke_async("go")

    with pytest.raises(KeyError) as unknown:
        await orchestrator.invoke_async([{"interruptResponse": {"interruptId": "missing", "response": 1}}])
    assert isinstance(unknown.value, UnknownInterruptError)
    assert unknown.value.code == "UNKNOWN_INTERRUPT_ID"
    assert "missing" in str(unknown.value)
    with pytest.raises(TypeError) as pending:
        await orchestrator.invoke_async("new task")
    assert isinstance(pending.value, PendingInterruptsError)
    with pytest.raises(ValueError, match="more than once") as duplicate:
        await orchestrator.invoke_async([answer(paused.interrupts[0], 1), answer(paused.interrupts[0], 1)])
    assert isinstance(duplicate.value, InterruptError)


@pytest.mark.parametrize("kind", sorted(BUILDERS))
async def test_interrupt_responses_to_an_orchestration_that_is_not_interrupted(kind: str) -> None:
    orchestrator, models = BUILDERS[kind]()
    response = [{"interruptResponse": {"interruptId": "v1:node:x", "response": "y"}}]

    with pytest.raises(NotInterruptedError):
        await orchestrator.invoke_async(response)

    paused = await orchestrator.invoke_async("go")  # still usable
    assert paused.status == Status.INTERRUPTED
    done = await orchestrator.invoke_async(answers(paused.interrupts, "y"))
    assert done.status == Status.COMPLETED
    calls = [model.calls for model in models]
    # Once finished, the same answers again are a replay (nothing runs); other answers to them are refused.
    replay = await orchestrator.invoke_async(answers(paused.interrupts, "y"))
    assert (replay.replayed, replay.status, replay.interrupts) == (True, Status.COMPLETED, [])
    with pytest.raises(InterruptAlreadyAnsweredError):
        await orchestrator.invoke_async(answers(paused.interrupts, "n"))
    with pytest.raises(NotInterruptedError):  # ids it never raised
        await orchestrator.invoke_async(response)
    assert [model.calls for model in models] == calls


async def test_changing_an_answer_already_applied_is_refused_and_repeating_it_is_a_no_op() -> None:
    orchestrator, models = parallel_graph()
    paused = await orchestrator.invoke_async("go")
    by_resource = {i.reason["resource"]: i for i in paused.interrupts}

    partial = await orchestrator.invoke_async([answer(by_resource["rb"], "y")])
    assert partial.status == Status.INTERRUPTED
    assert [i.id for i in partial.interrupts] == [by_resource["rc"].id]

    with pytest.raises(InterruptAlreadyAnsweredError):
        await orchestrator.invoke_async([answer(by_resource["rb"], "n"), answer(by_resource["rc"], "y")])
    assert [i.id for i in orchestrator.pending_interrupts] == [by_resource["rc"].id]

    # Repeating the applied answer (e.g. retrying a whole resume) changes nothing and does not rerun b.
    done = await orchestrator.invoke_async([answer(by_resource["rb"], "y"), answer(by_resource["rc"], "y")])
    assert done.status == Status.COMPLETED
    assert [model.calls for model in models] == [2, 2]


async def test_none_is_a_legitimate_answer() -> None:
    seen: list[Any] = []

    def hook(event: BeforeNodeCallEvent) -> None:
        seen.append(event.interrupt("maybe"))

    class Provider(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeNodeCallEvent, hook)

    model = ScriptedModel([text("done")])
    swarm = Swarm([Agent(name="worker", model=model, callback_handler=None)], hooks=[Provider()])
    paused = await swarm.invoke_async("go")
    done = await swarm.invoke_async(answers(paused.interrupts, None))
    assert done.status == Status.COMPLETED
    assert seen == [None]


# -- concurrency ----------------------------------------------------------------------------------------------------


def slow_graph() -> tuple[MultiAgentBase, ScriptedModel]:
    model = ScriptedModel([text("first"), text("second")], delay=0.2)
    builder = GraphBuilder()
    builder.add_node(Agent(name="slow", model=model, callback_handler=None), "slow")
    return builder.build(), model


def slow_swarm() -> tuple[MultiAgentBase, ScriptedModel]:
    model = ScriptedModel([text("first"), text("second")], delay=0.2)
    return Swarm([Agent(name="slow", model=model, callback_handler=None)]), model


@pytest.mark.parametrize("build", [slow_graph, slow_swarm])
async def test_a_second_concurrent_invocation_raises_concurrency_exception(build: Any) -> None:
    orchestrator, model = build()
    results: list[Any] = []

    async def first() -> None:
        results.append(await orchestrator.invoke_async("one"))

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        await anyio.sleep(0.05)
        with pytest.raises(ConcurrencyException, match="already running"):
            await orchestrator.invoke_async("two")
        with pytest.raises(ConcurrencyException):
            async for _ in orchestrator.stream_async("three"):
                pass

    assert [result.status for result in results] == [Status.COMPLETED]
    assert model.calls == 1
    # The refused calls did not break anything: the orchestrator runs again afterwards.
    assert (await orchestrator.invoke_async("four")).status == Status.COMPLETED


def test_blocking_calls_from_two_threads_are_refused_too() -> None:
    orchestrator, _ = slow_graph()
    outcomes: list[Any] = []

    def call(task: str) -> None:
        try:
            outcomes.append(orchestrator(task).status)
        except ConcurrencyException as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=call, args=(task,)) for task in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(type(outcome).__name__ for outcome in outcomes) == ["ConcurrencyException", "Status"]
