"""Swarm: handoffs through the injected tool, shared context, limits, failures and node history."""

import time
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.hooks import AfterNodeCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import Status, Swarm, SwarmResult


def agent(name: str, *turns: Any, delay: float = 0.0, description: str | None = None) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(list(turns) or [text(f"{name} done")], delay=delay)
    return Agent(name=name, model=model, callback_handler=None, description=description), model


def handoff(target: str, message: str = "over to you", **extra: Any) -> Any:
    return tool_call("handoff_to_agent", agent_name=target, message=message, **extra)


def history(result: SwarmResult) -> list[str]:
    return [node.node_id for node in result.node_history]


def first_prompt(model: ScriptedModel, call: int = -1) -> str:
    message = model.requests[call].messages[0]
    return "".join(block.get("text", "") for block in message["content"])


def tool_results(agent: Agent) -> list[dict[str, Any]]:
    return [block["toolResult"] for message in agent.messages for block in message["content"] if "toolResult" in block]


# -- handoffs -------------------------------------------------------------------------------------------------------


async def test_a_handoff_passes_the_task_message_and_shared_context_to_the_next_agent() -> None:
    a, model_a = agent("a", handoff("b", "please", context={"k": 1}), text("handed to b"))
    b, model_b = agent("b", text("b finished"), description="The finisher")
    swarm = Swarm([a, b])

    result = await swarm.invoke_async("Fix the bug")

    assert result.status == Status.COMPLETED
    assert history(result) == ["a", "b"]
    assert result.execution_count == 2
    assert (model_a.calls, model_b.calls) == (2, 1)
    assert result.results["b"].result.message["content"] == [{"text": "b finished"}]
    assert tool_results(a)[0]["status"] == "success"
    prompt = first_prompt(model_b)
    assert "Handoff Message: please" in prompt
    assert "User Request: Fix the bug" in prompt
    assert "Previous agents who worked on this: a" in prompt
    assert "Shared knowledge from previous agents:" in prompt
    assert "• a: {'k': 1}" in prompt
    assert "Agent name: a." in prompt
    assert "Agent name: b." not in prompt  # an agent is not offered itself
    assert swarm.state.shared_context.context == {"a": {"k": 1}}
    # The first agent saw b's description.
    assert "Agent name: b. Agent description: The finisher" in first_prompt(model_a, 0)


async def test_every_member_gets_the_handoff_tool() -> None:
    a, _ = agent("a")
    b, _ = agent("b")
    Swarm([a, b])
    assert "handoff_to_agent" in a.tool_names
    assert "handoff_to_agent" in b.tool_names
    solo, solo_model = agent("solo")
    assert (await Swarm([solo]).invoke_async("x")).status == Status.COMPLETED  # a one-agent swarm works too
    assert "handoff_to_agent" in [spec["name"] for spec in solo_model.requests[0].tool_specs or []]


async def test_a_handoff_streams_a_handoff_event_between_the_nodes() -> None:
    a, _ = agent("a", handoff("b", "please"), text("handed"))
    b, _ = agent("b")
    events = [event async for event in Swarm([a, b]).stream_async("go")]

    types = [(event["type"], event.get("node_id")) for event in events if event["type"] != "multiagent_node_stream"]
    assert types == [
        ("multiagent_node_start", "a"),
        ("multiagent_node_stop", "a"),
        ("multiagent_handoff", None),
        ("multiagent_node_start", "b"),
        ("multiagent_node_stop", "b"),
        ("multiagent_result", None),
    ]
    [handoff_event] = [event for event in events if event["type"] == "multiagent_handoff"]
    assert handoff_event == {
        "type": "multiagent_handoff",
        "from_node_ids": ["a"],
        "to_node_ids": ["b"],
        "message": "please",
    }


async def test_a_chain_of_handoffs_accumulates_history_and_context() -> None:
    a, _ = agent("a", handoff("b", "step 1", context={"from_a": "x"}), text("."))
    b, _ = agent("b", handoff("c", "step 2", context={"from_b": [1, 2]}), text("."))
    c, model_c = agent("c")
    result = await Swarm([a, b, c]).invoke_async("go")

    assert history(result) == ["a", "b", "c"]
    prompt = first_prompt(model_c)
    assert "Previous agents who worked on this: a → b" in prompt
    assert "• a: {'from_a': 'x'}" in prompt
    assert "• b: {'from_b': [1, 2]}" in prompt
    assert "Handoff Message: step 2" in prompt


async def test_a_handoff_to_an_unknown_agent_is_an_error_tool_result() -> None:
    a, model_a = agent("a", handoff("nobody"), text("stayed"))
    b, model_b = agent("b")
    result = await Swarm([a, b]).invoke_async("go")

    assert result.status == Status.COMPLETED
    assert history(result) == ["a"]
    [tool_result] = tool_results(a)
    assert tool_result["status"] == "error"
    assert tool_result["content"] == [{"text": "Error: Agent 'nobody' not found in swarm"}]
    assert (model_a.calls, model_b.calls) == (2, 0)


async def test_a_handoff_with_an_empty_context_key_is_an_error_tool_result() -> None:
    a, _ = agent("a", handoff("b", context={"": 1}), text("stayed"))
    b, model_b = agent("b")
    result = await Swarm([a, b]).invoke_async("go")
    assert history(result) == ["a"]
    [tool_result] = tool_results(a)
    assert tool_result["status"] == "error"
    assert "Error in handoff" in tool_result["content"][0]["text"]
    assert model_b.calls == 0


async def test_the_entry_point_chooses_the_first_agent() -> None:
    a, model_a = agent("a")
    b, model_b = agent("b")
    result = await Swarm([a, b], entry_point=b).invoke_async("go")
    assert history(result) == ["b"]
    assert (model_a.calls, model_b.calls) == (0, 1)


# -- validation -----------------------------------------------------------------------------------------------------


def test_duplicate_agent_names_are_refused() -> None:
    with pytest.raises(ValueError, match="Node ID 'same' is not unique"):
        Swarm([agent("same")[0], agent("same")[0]])


def test_the_same_agent_twice_is_refused() -> None:
    twice, _ = agent("twice")
    with pytest.raises(ValueError, match="unique"):
        Swarm([twice, twice])


def test_an_entry_point_outside_the_swarm_is_refused() -> None:
    with pytest.raises(ValueError, match="Entry point agent not found in swarm nodes"):
        Swarm([agent("a")[0]], entry_point=agent("outsider")[0])


def test_an_agent_with_its_own_handoff_tool_is_refused() -> None:
    @tool(name="handoff_to_agent")
    def mine(agent_name: str) -> str:
        """Mine.

        Args:
            agent_name: Name.
        """
        return agent_name

    model = ScriptedModel([])
    with pytest.raises(ValueError, match="handoff_to_agent"):
        Swarm([Agent(name="a", model=model, tools=[mine], callback_handler=None)])


def test_hooks_must_be_hook_providers() -> None:
    with pytest.raises(ValueError, match="HookProvider"):
        Swarm([agent("a")[0]], hooks=[lambda event: None])  # type: ignore[list-item]


# -- limits ---------------------------------------------------------------------------------------------------------


def ping_pong(rounds: int = 10) -> tuple[Agent, Agent, ScriptedModel, ScriptedModel]:
    a, model_a = agent("a", *[turn for _ in range(rounds) for turn in (handoff("b"), text("."))])
    b, model_b = agent("b", *[turn for _ in range(rounds) for turn in (handoff("a"), text("."))])
    return a, b, model_a, model_b


async def test_max_handoffs_fails_the_run() -> None:
    a, b, _, _ = ping_pong()
    result = await Swarm([a, b], max_handoffs=3).invoke_async("go")
    assert result.status == Status.FAILED
    assert history(result) == ["a", "b", "a"]
    assert result.results["a"].status == Status.COMPLETED  # the limit failed the run, not a node


async def test_max_iterations_fails_the_run() -> None:
    a, b, _, _ = ping_pong()
    result = await Swarm([a, b], max_iterations=4).invoke_async("go")
    assert result.status == Status.FAILED
    assert history(result) == ["a", "b", "a", "b"]


async def test_repetitive_handoffs_are_detected() -> None:
    a, b, _, _ = ping_pong()
    c, _ = agent("c")
    swarm = Swarm([a, b, c], repetitive_handoff_detection_window=4, repetitive_handoff_min_unique_agents=3)
    result = await swarm.invoke_async("go")
    assert result.status == Status.FAILED
    assert history(result) == ["a", "b", "a", "b"]


async def test_a_node_timeout_fails_the_node_and_the_run() -> None:
    slow, _ = agent("slow", delay=2.0)
    started = time.perf_counter()
    result = await Swarm([slow], node_timeout=0.2).invoke_async("go")
    assert time.perf_counter() - started < 1.5
    assert result.status == Status.FAILED
    assert result.results["slow"].status == Status.FAILED
    assert str(result.results["slow"].result) == "Node 'slow' execution timed out after 0.2s"


async def test_the_execution_timeout_fails_the_run() -> None:
    slow, _ = agent("slow", delay=2.0)
    started = time.perf_counter()
    result = await Swarm([slow], execution_timeout=0.2).invoke_async("go")
    assert time.perf_counter() - started < 1.5
    assert result.status == Status.FAILED


# -- failures -------------------------------------------------------------------------------------------------------


async def test_a_node_exception_fails_the_run_without_raising() -> None:
    a, _ = agent("a", handoff("b"), text("handed"))
    b, _ = agent("b", RuntimeError("model exploded"))
    c, model_c = agent("c")
    after: list[str] = []

    class After(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(AfterNodeCallEvent, lambda event: after.append(event.node_id))

    result = await Swarm([a, b, c], hooks=[After()]).invoke_async("go")

    assert result.status == Status.FAILED
    assert history(result) == ["a", "b"]
    assert result.results["a"].status == Status.COMPLETED
    assert result.results["b"].status == Status.FAILED
    assert str(result.results["b"].result) == "model exploded"
    assert after == ["a", "b"]
    assert model_c.calls == 0


# -- node conversations ---------------------------------------------------------------------------------------------


async def test_by_default_each_invocation_starts_every_agent_from_its_initial_conversation() -> None:
    a, model_a = agent("a", text("one"), text("two"))
    a.state.set("counter", 0)
    swarm = Swarm([a])
    await swarm.invoke_async("first")
    a.state.set("counter", 5)
    await swarm.invoke_async("second")

    assert len(model_a.requests[1].messages) == 1
    assert "second" in first_prompt(model_a, 1)
    assert a.state.get("counter") == 0


async def test_preserve_node_history_keeps_an_agents_conversation_across_invocations() -> None:
    a, model_a = agent("a", text("one"), text("two"))
    swarm = Swarm([a], preserve_node_history=True)
    await swarm.invoke_async("first")
    await swarm.invoke_async("second")

    messages = model_a.requests[1].messages
    assert len(messages) == 3
    assert messages[1] == {"role": "assistant", "content": [{"text": "one"}]}
    assert "second" in "".join(block.get("text", "") for block in messages[2]["content"])


async def test_preserve_node_history_keeps_a_revisited_agents_conversation() -> None:
    a, model_a = agent("a", handoff("b"), text("handed"), text("a again"))
    b, _ = agent("b", handoff("a"), text("handed back"))
    result = await Swarm([a, b], preserve_node_history=True).invoke_async("go")
    assert history(result) == ["a", "b", "a"]
    assert len(model_a.requests[-1].messages) == 5  # prompt, tool use, tool result, answer, new prompt


async def test_by_default_a_revisited_agent_starts_from_its_initial_conversation() -> None:
    a, model_a = agent("a", handoff("b"), text("handed"), text("a again"))
    b, _ = agent("b", handoff("a"), text("handed back"))
    result = await Swarm([a, b]).invoke_async("go")
    assert history(result) == ["a", "b", "a"]
    assert len(model_a.requests[-1].messages) == 1


async def test_the_result_is_a_swarm_result_with_totals() -> None:
    a, _ = agent("a", handoff("b"), text("handed"))
    b, _ = agent("b")
    result = await Swarm([a, b]).invoke_async("go")
    assert isinstance(result, SwarmResult)
    per_node = sum(node.accumulated_usage["totalTokens"] for node in result.results.values())
    assert result.accumulated_usage["totalTokens"] == per_node > 0
    assert "b: b done" in str(result)


async def test_a_multi_modal_task_reaches_the_agents() -> None:
    a, model_a = agent("a")
    task = [{"text": "Describe the attached report"}, {"text": "Be brief"}]
    result = await Swarm([a]).invoke_async(task)
    assert result.status == Status.COMPLETED
    content = model_a.requests[0].messages[0]["content"]
    assert "User Request: Multi-modal task" in content[0]["text"]
    assert content[1:] == task
