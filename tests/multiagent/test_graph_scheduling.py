"""Graph scheduling: fan-in, conditional edges, cycles and their limits, revisits, builder validation, results."""

import logging
from typing import Any

import pytest

from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.multiagent import GraphBuilder, GraphResult, GraphState, Status


def agent(name: str, *replies: str, repeat: int = 1, delay: float = 0.0) -> tuple[Agent, ScriptedModel]:
    turns = [text(reply) for reply in replies] or [text(f"{name} done")] * repeat
    model = ScriptedModel(turns, delay=delay)
    return Agent(name=name, model=model, callback_handler=None), model


def order(result: GraphResult) -> list[str]:
    return [node.node_id for node in result.execution_order]


class Nodes:
    """Builds a graph of text agents and keeps their models by node id."""

    def __init__(self) -> None:
        self.builder = GraphBuilder()
        self.models: dict[str, ScriptedModel] = {}
        self.agents: dict[str, Agent] = {}

    def add(self, node_id: str, *replies: str, repeat: int = 1, fan_in: Any = "any", delay: float = 0.0) -> "Nodes":
        node_agent, model = agent(node_id, *replies, repeat=repeat, delay=delay)
        self.builder.add_node(node_agent, node_id, fan_in=fan_in)
        self.models[node_id] = model
        self.agents[node_id] = node_agent
        return self

    def edge(self, source: str, target: str, condition: Any = None) -> "Nodes":
        self.builder.add_edge(source, target, condition)
        return self

    def calls(self) -> dict[str, int]:
        return {node_id: model.calls for node_id, model in self.models.items()}


# -- fan-in ---------------------------------------------------------------------------------------------------------


def skip_graph(fan_in: str) -> Nodes:
    """a → b → d and a → d: d's parents finish in different batches (b is slow, so d's first run ends first)."""
    return (
        Nodes()
        .add("a")
        .add("b", delay=0.05)
        .add("d", repeat=2, fan_in=fan_in)
        .edge("a", "b")
        .edge("b", "d")
        .edge("a", "d")
    )


async def test_fan_in_any_runs_a_node_each_time_a_parent_batch_completes() -> None:
    nodes = skip_graph("any")  # Strands' rule
    result = await nodes.builder.build().invoke_async("go")

    assert result.status == Status.COMPLETED
    assert nodes.calls() == {"a": 1, "b": 1, "d": 2}
    assert sorted(order(result)) == ["a", "b", "d", "d"]
    assert order(result)[0] == "a"
    assert order(result)[-1] == "d"
    assert result.execution_count == 4
    # d's first run saw only a's output; the second saw both a and b.
    first, second = (str(request.messages) for request in nodes.models["d"].requests)
    assert "a done" in first
    assert "From b" not in first
    assert "a done" in second
    assert "b done" in second


async def test_fan_in_all_waits_for_every_parent() -> None:
    nodes = skip_graph("all")
    result = await nodes.builder.build().invoke_async("go")

    assert result.status == Status.COMPLETED
    assert nodes.calls() == {"a": 1, "b": 1, "d": 1}
    assert order(result) == ["a", "b", "d"]
    prompt = str(nodes.models["d"].requests[0].messages[0])
    assert "a done" in prompt
    assert "b done" in prompt


async def test_fan_in_all_with_parents_in_one_batch_runs_once() -> None:
    nodes = Nodes().add("a").add("b").add("c", fan_in="all").edge("a", "c").edge("b", "c")
    result = await nodes.builder.build().invoke_async("go")
    assert order(result)[2:] == ["c"]
    assert nodes.calls() == {"a": 1, "b": 1, "c": 1}


async def test_fan_in_all_never_runs_when_a_parent_fails() -> None:
    nodes = Nodes().add("a").add("c", fan_in="all").edge("a", "c")
    broken_model = ScriptedModel([RuntimeError("boom")])
    nodes.builder.add_node(Agent(name="b", model=broken_model, callback_handler=None), "b")
    nodes.edge("b", "c")
    result = await nodes.builder.build().invoke_async("go")

    assert result.status == Status.FAILED
    assert result.results["b"].status == Status.FAILED
    assert "c" not in result.results
    assert nodes.calls() == {"a": 1, "c": 0}


def test_unknown_fan_in_is_refused() -> None:
    worker, _ = agent("w")
    with pytest.raises(ValueError, match="fan_in"):
        GraphBuilder().add_node(worker, "w", fan_in="some")


# -- conditional edges ----------------------------------------------------------------------------------------------


def last_text(state: GraphState, node_id: str) -> str:
    result = state.results.get(node_id)
    return str(result.result) if result is not None else ""


async def test_conditional_edges_choose_a_branch_from_the_state() -> None:
    nodes = (
        Nodes()
        .add("router", "route: left")
        .add("left")
        .add("right")
        .edge("router", "left", lambda state: "left" in last_text(state, "router"))
        .edge("router", "right", lambda state: "right" in last_text(state, "router"))
    )
    result = await nodes.builder.build().invoke_async("go")

    assert result.status == Status.COMPLETED
    assert order(result) == ["router", "left"]
    assert nodes.calls() == {"router": 1, "left": 1, "right": 0}
    assert "right" not in result.results


async def test_a_condition_may_take_the_invocation_state() -> None:
    seen: list[Any] = []

    def wants(target: str) -> Any:
        def condition(state: GraphState, *, invocation_state: dict[str, Any]) -> bool:
            seen.append(dict(invocation_state))
            return invocation_state.get("branch") == target

        return condition

    nodes = Nodes().add("router", repeat=2).add("left").add("right")
    nodes.edge("router", "left", wants("left")).edge("router", "right", wants("right"))
    graph = nodes.builder.build()
    invocation_state = {"branch": "right"}

    result = await graph.invoke_async("go", invocation_state)

    assert order(result) == ["router", "right"]
    assert all(state.get("branch") == "right" for state in seen)
    assert invocation_state == {"branch": "right"}  # the caller's dict is not mutated
    assert (await graph.invoke_async("again", branch="left")).results.keys() == {"router", "left"}


async def test_all_conditions_false_completes_after_the_entry_node() -> None:
    nodes = Nodes().add("a").add("b").edge("a", "b", lambda state: False)
    result = await nodes.builder.build().invoke_async("go")
    assert result.status == Status.COMPLETED
    assert order(result) == ["a"]


# -- cycles ---------------------------------------------------------------------------------------------------------


def cycle(limit: int | None, *, reset: bool = False, condition: Any = None) -> Nodes:
    nodes = Nodes().add("a", repeat=10).add("b", repeat=10).edge("a", "b").edge("b", "a", condition)
    nodes.builder.set_entry_point("a")
    if limit is not None:
        nodes.builder.set_max_node_executions(limit)
    nodes.builder.reset_on_revisit(reset)
    return nodes


async def test_a_cycle_stops_at_max_node_executions_with_failed_status() -> None:
    nodes = cycle(5)
    result = await nodes.builder.build().invoke_async("go")

    assert result.status == Status.FAILED
    assert order(result) == ["a", "b", "a", "b", "a"]
    assert result.execution_count == 5
    assert nodes.calls() == {"a": 3, "b": 2}
    assert result.failed_nodes == 0  # the limit failed the run, not a node
    assert result.results["a"].status == Status.COMPLETED


async def test_a_conditional_cycle_ends_by_itself() -> None:
    nodes = cycle(20, condition=lambda state: len(state.execution_order) < 4)
    result = await nodes.builder.build().invoke_async("go")
    assert result.status == Status.COMPLETED
    assert order(result) == ["a", "b", "a", "b"]


async def test_a_revisited_node_keeps_its_conversation_by_default() -> None:
    nodes = cycle(3)
    await nodes.builder.build().invoke_async("go")
    first, second = nodes.models["a"].requests
    assert len(first.messages) == 1
    assert len(second.messages) == 3  # its first prompt and answer, then the new prompt


async def test_reset_on_revisit_gives_a_revisited_node_a_fresh_conversation() -> None:
    nodes = cycle(3, reset=True)
    nodes.agents["a"].state.set("visits", 0)
    result = await nodes.builder.build().invoke_async("go")

    assert order(result) == ["a", "b", "a"]
    first, second = nodes.models["a"].requests
    assert len(first.messages) == 1
    assert len(second.messages) == 1
    assert "b done" in str(second.messages[0])


def test_an_unbounded_cycle_is_logged_at_build(caplog: pytest.LogCaptureFixture) -> None:
    nodes = cycle(None)
    with caplog.at_level(logging.WARNING):
        nodes.builder.build()
    assert "cycles" in caplog.text


async def test_a_graph_runs_again_from_scratch_on_a_new_task() -> None:
    nodes = Nodes().add("a", repeat=2).add("b", repeat=2).edge("a", "b")
    graph = nodes.builder.build()
    first = await graph.invoke_async("one")
    second = await graph.invoke_async("two")
    assert order(first) == order(second) == ["a", "b"]
    assert second.execution_count == 2
    assert second.results["a"].result is not first.results["a"].result
    assert "two" in str(nodes.models["a"].requests[-1].messages[-1])


# -- builder validation ---------------------------------------------------------------------------------------------


def test_edge_to_or_from_an_unknown_node_is_refused() -> None:
    builder = GraphBuilder()
    builder.add_node(agent("a")[0], "a")
    with pytest.raises(ValueError, match="Target node 'zz' not found"):
        builder.add_edge("a", "zz")
    with pytest.raises(ValueError, match="Source node 'zz' not found"):
        builder.add_edge("zz", "a")
    with pytest.raises(ValueError, match="'zz' not found"):
        builder.set_entry_point("zz")


def test_duplicate_node_id_is_refused() -> None:
    builder = GraphBuilder()
    builder.add_node(agent("a")[0], "a")
    with pytest.raises(ValueError, match="Node 'a' already exists"):
        builder.add_node(agent("other")[0], "a")


def test_the_same_agent_twice_is_refused() -> None:
    builder = GraphBuilder()
    worker, _ = agent("a")
    builder.add_node(worker, "a")
    with pytest.raises(ValueError, match="Duplicate node instance detected"):
        builder.add_node(worker, "b")


def test_a_graph_without_nodes_is_refused() -> None:
    with pytest.raises(ValueError, match="Graph must contain at least one node"):
        GraphBuilder().build()


def test_a_graph_whose_nodes_all_have_dependencies_has_no_entry_point() -> None:
    nodes = Nodes().add("a").add("b").edge("a", "b").edge("b", "a")
    with pytest.raises(ValueError, match="No entry points found - all nodes have dependencies"):
        nodes.builder.build()


def test_node_ids_default_to_the_agent_name() -> None:
    builder = GraphBuilder()
    node = builder.add_node(agent("named")[0])
    assert node.node_id == "named"


# -- results --------------------------------------------------------------------------------------------------------


async def test_graph_result_counts_order_and_usage() -> None:
    nodes = Nodes().add("a").add("b").add("c").edge("a", "b").edge("a", "c")
    broken = ScriptedModel([RuntimeError("boom")])
    nodes.builder.add_node(Agent(name="x", model=broken, callback_handler=None), "x")
    nodes.edge("b", "x")
    result = await nodes.builder.build().invoke_async("go")

    assert isinstance(result, GraphResult)
    assert result.status == Status.FAILED
    assert (result.total_nodes, result.completed_nodes, result.failed_nodes, result.interrupted_nodes) == (4, 3, 1, 0)
    assert order(result)[0] == "a"
    assert sorted(order(result)) == ["a", "b", "c", "x"]
    assert result.execution_count == 4
    assert [node.node_id for node in result.entry_points] == ["a"]
    assert {(s.node_id, t.node_id) for s, t in result.edges} == {("a", "b"), ("a", "c"), ("b", "x")}
    per_node = sum(node.accumulated_usage["totalTokens"] for node in result.results.values())
    assert result.accumulated_usage["totalTokens"] == per_node > 0
    assert all(node.execution_time >= 0 for node in result.results.values())
    assert result.execution_time >= 0
    assert "a: a done" in str(result)
