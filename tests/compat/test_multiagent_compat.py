"""Issue 12, item 7: Agent subclasses as Graph nodes, and MultiAgentBase.__call__ passing keywords on."""

from typing import Any

import pytest

from strandslike import Agent
from strandslike.agent import AgentResult, AgentState
from strandslike.hooks import HookRegistry
from strandslike.multiagent import GraphBuilder, MultiAgentBase, MultiAgentResult, NodeResult, Status


class _Metrics:
    def __init__(self) -> None:
        self.accumulated_usage = {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30}
        self.accumulated_metrics = {"latencyMs": 100.0}


class StatefulAgent(Agent):
    """Strands' own graph test: an Agent subclass overriding invoke_async and stream_async."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.state = AgentState()
        self.state.set("execution_count", 0)
        self.messages = []
        self._session_manager = None
        self.hooks = HookRegistry()
        self.seen_state: list[Any] = []

    async def invoke_async(self, input_data: Any, invocation_state: Any = None, **kwargs: Any) -> AgentResult:
        count = self.state.get("execution_count") or 0
        self.state.set("execution_count", count + 1)
        self.seen_state.append(invocation_state)
        return AgentResult(
            message={"role": "assistant", "content": [{"text": f"{self.name} response (execution {count + 1})"}]},
            stop_reason="end_turn",
            state={},
            metrics=_Metrics(),  # type: ignore[arg-type]
        )

    async def stream_async(self, input_data: Any, **kwargs: Any):  # type: ignore[override]
        yield {"agent_start": True}
        result = await self.invoke_async(input_data, kwargs.get("invocation_state"))
        yield {"result": result}


class InvokeOnlyAgent(Agent):
    """An Agent subclass overriding invoke_async only."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Any] = []

    async def invoke_async(self, prompt: Any = None, **kwargs: Any) -> AgentResult:
        self.calls.append(prompt)
        return AgentResult("end_turn", {"role": "assistant", "content": [{"text": "custom"}]})


async def test_graph_runs_agent_subclasses_through_their_overrides() -> None:
    agent_a, agent_b = StatefulAgent("agent_a"), StatefulAgent("agent_b")
    builder = GraphBuilder()
    builder.add_node(agent_a, "a")
    builder.add_node(agent_b, "b")
    builder.add_edge("a", "b")
    builder.add_edge("b", "a")
    builder.set_entry_point("a")
    builder.reset_on_revisit()
    graph = builder.set_max_node_executions(3).build()

    events = [event async for event in graph.stream_async("Test", invocation_state={"k": "v"})]
    result = events[-1]["result"]
    assert [node.node_id for node in result.execution_order] == ["a", "b", "a"]
    assert agent_a.state.get("execution_count") >= 1
    assert agent_b.state.get("execution_count") >= 1
    assert result.results["b"].result.message["content"][0]["text"].startswith("agent_b response")
    assert result.accumulated_usage["totalTokens"] >= 60
    streamed = [e["event"] for e in events if e.get("type") == "multiagent_node_stream"]
    assert {"agent_start": True} in streamed
    assert agent_a.seen_state[0]["k"] == "v"


async def test_graph_uses_an_overridden_invoke_async() -> None:
    node = InvokeOnlyAgent()
    builder = GraphBuilder()
    builder.add_node(node, "only")
    result = await builder.build().invoke_async("do it")
    assert result.status == Status.COMPLETED
    assert node.calls == ["do it"]
    assert str(result.results["only"].result) == "custom\n"


@pytest.mark.filterwarnings("ignore:`\\*\\*kwargs` parameter is deprecating:UserWarning")
def test_multi_agent_base_call_merges_keywords_into_invocation_state() -> None:
    class TestMultiAgent(MultiAgentBase):
        def __init__(self) -> None:
            self.received: list[Any] = []

        async def invoke_async(self, task: Any, invocation_state: Any, **kwargs: Any) -> MultiAgentResult:
            self.received.append((task, invocation_state, kwargs))
            return MultiAgentResult(
                status=Status.COMPLETED,
                results={"test": NodeResult(result=Exception("test"), status=Status.COMPLETED)},
            )

        def serialize_state(self) -> dict[str, Any]:
            return {}

        def deserialize_state(self, payload: dict[str, Any]) -> None:
            pass

    orchestrator = TestMultiAgent()
    result = orchestrator("test task", param1="value1", param2="value2", invocation_state={"value3": "value4"})
    assert result.status == Status.COMPLETED
    assert orchestrator.received == [
        ("test task", {"param1": "value1", "param2": "value2", "value3": "value4"}, {}),
    ]


def test_multi_agent_base_call_warns_about_keywords() -> None:
    class Echo(MultiAgentBase):
        async def invoke_async(self, task: Any, invocation_state: Any = None, **kwargs: Any) -> MultiAgentResult:
            return MultiAgentResult(status=Status.COMPLETED)

    with pytest.warns(UserWarning, match="use `invocation_state` instead"):
        Echo()("task", extra=1)
