"""Harder resume paths on a file session: each step of the run is handled by a brand-new orchestrator object."""

from pathlib import Path
from typing import Any

import pytest
from helpers import answer, answers
from multiagent_workers import build

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.interrupt import PendingInterruptsError
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.models.scripted import ScriptedTurn
from strandslike.multiagent import GraphBuilder, Status, Swarm
from strandslike.session import FileSessionManager


def texts(message: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in message["content"])


async def test_a_restored_graph_feeds_the_saved_parent_output_to_the_next_node(tmp_path: Path) -> None:
    first, _ = build("graph-hook", tmp_path, "pause")
    paused = await first.invoke_async("Inspect and clean up my resources")

    fresh, models = build("graph-hook", tmp_path, "resume")
    await fresh.invoke_async(answers(paused.interrupts, "y"))

    prompt = texts(models["cleanup"].requests[0].messages[0])
    assert "Original Task: Inspect and clean up my resources" in prompt
    assert "Found 3 old resources." in prompt


async def test_a_restored_swarm_keeps_the_handoff_message_and_history(tmp_path: Path) -> None:
    first, _ = build("swarm-hook", tmp_path, "pause")
    paused = await first.invoke_async("Inspect and clean up my resources")

    fresh, models = build("swarm-hook", tmp_path, "resume")
    result = await fresh.invoke_async(answers(paused.interrupts, "y"))

    prompt = texts(models["cleanup"].requests[0].messages[0])
    assert "Handoff Message: clean" in prompt
    assert "User Request: Inspect and clean up my resources" in prompt
    assert "Previous agents who worked on this: inspector" in prompt
    assert [node.node_id for node in result.node_history] == ["inspector", "cleanup"]


async def test_a_restored_node_agent_continues_its_own_conversation(tmp_path: Path) -> None:
    first, _ = build("graph-tool", tmp_path, "pause")
    paused = await first.invoke_async("Inspect and clean up my resources")

    fresh, models = build("graph-tool", tmp_path, "resume")
    await fresh.invoke_async(answers(paused.interrupts, "y"))

    [request] = models["cleanup"].requests
    assert [message["role"] for message in request.messages] == ["user", "assistant", "user"]
    tool_use = request.messages[1]["content"][0]["toolUse"]
    tool_result = request.messages[2]["content"][0]["toolResult"]
    assert (tool_use["toolUseId"], tool_result["toolUseId"]) == ("t1", "t1")
    assert tool_result["content"] == [{"text": "cleaned db"}]


# -- a hook that asks twice, across three objects ---------------------------------------------------------------


class TwoStep(HookProvider):
    def __init__(self) -> None:
        self.answers: list[Any] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        self.answers.append(event.interrupt("confirm", reason="first"))
        self.answers.append(event.interrupt("double-confirm", reason="second"))


def two_step_graph(tmp_path: Path, turns: list[ScriptedTurn]) -> tuple[Any, ScriptedModel, TwoStep]:
    model = ScriptedModel(turns)
    hook = TwoStep()
    builder = GraphBuilder()
    builder.add_node(Agent(name="worker", model=model, callback_handler=None), "worker")
    builder.set_hook_providers([hook])
    builder.set_session_manager(FileSessionManager("two-step", storage_dir=tmp_path))
    return builder.build(), model, hook


async def test_a_hook_asking_twice_is_answered_by_two_different_objects(tmp_path: Path) -> None:
    first, _, _ = two_step_graph(tmp_path, [])
    one = await first.invoke_async("go")
    assert [i.name for i in one.interrupts] == ["confirm"]

    second, second_model, second_hook = two_step_graph(tmp_path, [])
    two = await second.invoke_async(answers(one.interrupts, "yes"))
    assert [i.name for i in two.interrupts] == ["double-confirm"]
    assert second_hook.answers == ["yes"]
    assert second_model.calls == 0

    third, third_model, third_hook = two_step_graph(tmp_path, [text("done")])
    done = await third.invoke_async(answers(two.interrupts, "sure"))
    assert done.status == Status.COMPLETED
    assert third_hook.answers == ["yes", "sure"]
    assert third_model.calls == 1


# -- two parallel nodes, answered by two different objects --------------------------------------------------------


def approval_tool(runs: list[Any]) -> Any:
    @tool(context=True)
    def cleanup(resource: str, tool_context: ToolContext) -> str:
        """Clean up a resource after approval.

        Args:
            resource: The resource.
        """
        response = tool_context.interrupt("approval", reason={"resource": resource})
        runs.append((resource, response))
        return str(response)

    return cleanup


def parallel_graph(tmp_path: Path, phase: str, runs: list[Any]) -> tuple[Any, dict[str, ScriptedModel]]:
    """a → (b, c) → d (fan-in all); b and c ask with the same tool-use id."""
    pause = phase == "pause"
    turns: dict[str, list[ScriptedTurn]] = {
        "a": [text("a done")] if pause else [],
        "b": [tool_call("cleanup", tool_use_id="t1", resource="rb")] if pause else [text("b done")],
        "c": [tool_call("cleanup", tool_use_id="t1", resource="rc")] if pause else [text("c done")],
        "d": [] if pause else [text("d done")],
    }
    models = {node_id: ScriptedModel(node_turns) for node_id, node_turns in turns.items()}
    builder = GraphBuilder()
    for node_id, model in models.items():
        tools = [approval_tool(runs)] if node_id in ("b", "c") else []
        executor = Agent(name=node_id, model=model, tools=tools, callback_handler=None)
        builder.add_node(executor, node_id, fan_in="all" if node_id == "d" else "any")
    for source, target in (("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")):
        builder.add_edge(source, target)
    builder.set_session_manager(FileSessionManager("parallel", storage_dir=tmp_path))
    return builder.build(), models


async def test_parallel_interrupts_answered_one_by_one_by_fresh_objects(tmp_path: Path) -> None:
    runs: list[Any] = []
    first, _ = parallel_graph(tmp_path, "pause", runs)
    paused = await first.invoke_async("go")
    assert len({i.id for i in paused.interrupts}) == 2
    by_resource = {i.reason["resource"]: i for i in paused.interrupts}

    second, second_models = parallel_graph(tmp_path, "resume", runs)
    partial = await second.invoke_async([answer(by_resource["rb"], "y")])
    assert partial.status == Status.INTERRUPTED
    assert [i.id for i in partial.interrupts] == [by_resource["rc"].id]
    assert {node_id: model.calls for node_id, model in second_models.items()} == {"a": 0, "b": 1, "c": 0, "d": 0}

    third, third_models = parallel_graph(tmp_path, "resume", runs)
    assert [i.id for i in third.pending_interrupts] == [by_resource["rc"].id]
    done = await third.invoke_async([answer(by_resource["rc"], "y")])

    assert done.status == Status.COMPLETED
    assert runs == [("rb", "y"), ("rc", "y")]
    assert {node_id: model.calls for node_id, model in third_models.items()} == {"a": 0, "b": 0, "c": 1, "d": 1}
    assert [node.node_id for node in done.execution_order] == ["a", "b", "c", "d"]
    prompt = texts(third_models["d"].requests[0].messages[0])
    assert "b done" in prompt
    assert "c done" in prompt


async def test_a_swarm_with_preserved_history_restores_each_agents_conversation(tmp_path: Path) -> None:
    def swarm(turns: list[ScriptedTurn]) -> tuple[Swarm, ScriptedModel]:
        model = ScriptedModel(turns)
        member = Agent(name="solo", model=model, callback_handler=None)
        session = FileSessionManager("preserved", storage_dir=tmp_path)
        return Swarm([member], session_manager=session, preserve_node_history=True), model

    first, _ = swarm([text("one")])
    assert (await first.invoke_async("first")).status == Status.COMPLETED

    second, model = swarm([text("two")])
    assert (await second.invoke_async("second")).status == Status.COMPLETED
    assert [message["role"] for message in model.requests[0].messages] == ["user", "assistant", "user"]


def mixed_graph(tmp_path: Path, phase: str, runs: list[Any], fan_in: Any) -> tuple[Any, dict[str, ScriptedModel]]:
    """b (asks) and c (answers at once) run in parallel; both feed d."""
    pause = phase == "pause"
    turns: dict[str, list[ScriptedTurn]] = {
        "b": [tool_call("cleanup", tool_use_id="t1", resource="rb")] if pause else [text("b done")],
        "c": [text("c done")] if pause else [],
        "d": [] if pause else [text("d done")],
    }
    models = {node_id: ScriptedModel(node_turns) for node_id, node_turns in turns.items()}
    builder = GraphBuilder()
    for node_id, model in models.items():
        tools = [approval_tool(runs)] if node_id == "b" else []
        executor = Agent(name=node_id, model=model, tools=tools, callback_handler=None)
        builder.add_node(executor, node_id, fan_in=fan_in if node_id == "d" else "any")
    builder.add_edge("b", "d")
    builder.add_edge("c", "d")
    builder.set_session_manager(FileSessionManager("mixed", storage_dir=tmp_path))
    return builder.build(), models


@pytest.mark.parametrize("fan_in", ["any", "all"])
async def test_a_node_that_completed_before_the_pause_is_not_rerun_by_a_fresh_object(
    tmp_path: Path, fan_in: str
) -> None:
    runs: list[Any] = []
    first, _ = mixed_graph(tmp_path, "pause", runs, fan_in)
    paused = await first.invoke_async("go")
    assert paused.results["c"].status == Status.COMPLETED

    fresh, models = mixed_graph(tmp_path, "resume", runs, fan_in)
    done = await fresh.invoke_async(answers(paused.interrupts, "y"))

    assert done.status == Status.COMPLETED
    assert {node_id: model.calls for node_id, model in models.items()} == {"b": 1, "c": 0, "d": 1}
    assert [node.node_id for node in done.execution_order] == ["c", "b", "d"]
    prompt = texts(models["d"].requests[0].messages[0])
    assert "b done" in prompt
    assert "c done" in prompt


async def test_a_new_task_for_a_restored_interrupted_run_is_refused(tmp_path: Path) -> None:
    first, _ = build("graph-tool", tmp_path, "pause")
    paused = await first.invoke_async("Inspect and clean up my resources")
    fresh, models = build("graph-tool", tmp_path, "resume")
    with pytest.raises(PendingInterruptsError):
        await fresh.invoke_async("something else")
    done = await fresh.invoke_async(answers(paused.interrupts, "y"))
    assert done.status == Status.COMPLETED
    assert models["cleanup"].calls == 1


async def test_a_node_agents_state_is_persisted_with_the_orchestrator(tmp_path: Path) -> None:
    @tool(context=True)
    def remember(tool_context: ToolContext) -> str:
        """Ask and remember the answer."""
        response = tool_context.interrupt("remember")
        tool_context.agent.state.set("remembered", response)
        return "ok"

    def swarm(turns: list[ScriptedTurn]) -> tuple[Swarm, Agent]:
        member = Agent(
            name="solo", model=ScriptedModel(turns), tools=[remember], state={"built": True}, callback_handler=None
        )
        return Swarm([member], session_manager=FileSessionManager("state", storage_dir=tmp_path)), member

    first, _ = swarm([tool_call("remember", tool_use_id="r1")])
    paused = await first.invoke_async("go")
    second, member = swarm([text("done")])
    done = await second.invoke_async(answers(paused.interrupts, {"color": "blue"}))
    assert done.status == Status.COMPLETED
    assert member.state.get() == {"built": True, "remembered": {"color": "blue"}}

    _, restored = swarm([])
    assert restored.state.get("remembered") == {"color": "blue"}
    assert [message["role"] for message in restored.messages] == ["user", "assistant", "user", "assistant"]
