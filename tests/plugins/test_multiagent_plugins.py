"""`MultiAgentPlugin` on Graph and Swarm (``plugins=``, ``GraphBuilder.set_plugins``), and dual-use plugins."""

import asyncio
from typing import Any

import pytest

from strandslike import Agent
from strandslike.hooks import AfterNodeCallEvent, BeforeInvocationEvent, BeforeNodeCallEvent
from strandslike.models import ScriptedModel, text
from strandslike.multiagent import Graph, GraphBuilder, Status, Swarm
from strandslike.plugins import MultiAgentPlugin, Plugin, PluginConfigError, PluginTypeError, hook


class Monitor(MultiAgentPlugin):
    name = "monitor"

    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []
        self.nodes_at_init: list[str] = []

    def init_multi_agent(self, orchestrator: Any) -> None:
        self.nodes_at_init = sorted(orchestrator.nodes)

    @hook
    def before(self, event: BeforeNodeCallEvent) -> None:
        self.log.append(f"before {event.node_id}")

    @hook
    async def after(self, event: AfterNodeCallEvent) -> None:
        await asyncio.sleep(0)
        self.log.append(f"after {event.node_id}")


def agent(name: str, answer: str = "ok") -> Agent:
    return Agent(name=name, model=ScriptedModel([text(answer)]))


def test_graph_builder_set_plugins_attaches_them_to_the_graph():
    monitor = Monitor()
    builder = GraphBuilder()
    builder.add_node(agent("a"), "a")
    builder.add_node(agent("b"), "b")
    builder.add_edge("a", "b")
    graph = builder.set_plugins([monitor]).build()

    result = graph("task")

    assert result.status == Status.COMPLETED
    assert monitor.nodes_at_init == ["a", "b"]
    assert monitor.log == ["before a", "after a", "before b", "after b"]


def test_swarm_plugins_see_the_nodes_and_their_hooks_run():
    monitor = Monitor()
    swarm = Swarm([agent("solo")], plugins=[monitor])

    result = swarm("task")

    assert result.status == Status.COMPLETED
    assert monitor.nodes_at_init == ["solo"]
    assert monitor.log == ["before solo", "after solo"]


def test_a_multi_agent_plugin_hook_can_interrupt_a_node():
    class Gate(MultiAgentPlugin):
        name = "gate"

        @hook
        def gate(self, event: BeforeNodeCallEvent) -> None:
            if event.interrupt("gate", reason={"node": event.node_id}) != "y":
                event.cancel_node = "refused"

    swarm = Swarm([agent("solo", "done")], plugins=[Gate()])
    paused = swarm("task")
    assert paused.status == Status.INTERRUPTED
    assert swarm.pending_interrupts == paused.interrupts
    resumed = swarm([paused.interrupts[0].resume("y")])
    assert resumed.status == Status.COMPLETED
    assert swarm.pending_interrupts == []


def test_async_init_multi_agent_is_awaited():
    class AsyncInit(MultiAgentPlugin):
        name = "async-init"
        ready = False

        async def init_multi_agent(self, orchestrator: Any) -> None:
            await asyncio.sleep(0)
            self.ready = True

    plugin = AsyncInit()
    Swarm([agent("solo")], plugins=[plugin])
    assert plugin.ready is True


def test_a_dual_use_plugin_works_on_agents_and_orchestrators():
    class Observability(Plugin, MultiAgentPlugin):
        name = "observability"

        def __init__(self) -> None:
            super().__init__()
            self.log: list[str] = []

        @hook
        def on_invocation(self, event: BeforeInvocationEvent) -> None:
            self.log.append("agent invocation")

        @hook
        def on_node(self, event: BeforeNodeCallEvent) -> None:
            self.log.append(f"node {event.node_id}")

    shared = Observability()
    assert len(shared.hooks) == 2  # discovered once, though both bases run their __init__ logic
    node = Agent(name="solo", model=ScriptedModel([text("ok")]), plugins=[shared])
    swarm = Swarm([node], plugins=[shared])
    swarm("task")
    assert shared.log == ["node solo", "agent invocation"]


def test_orchestrator_plugin_errors_are_typed():
    with pytest.raises(PluginConfigError, match="plugin already registered"):
        Swarm([agent("solo")], plugins=[Monitor(), Monitor()])

    class AgentOnly(Plugin):
        name = "agent-only"

    with pytest.raises(PluginTypeError, match="attach it to an Agent instead"):
        Swarm([agent("solo")], plugins=[AgentOnly()])
    with pytest.raises(PluginTypeError, match="takes a list of plugins"):
        GraphBuilder().set_plugins(Monitor())  # type: ignore[arg-type]
    with pytest.raises(PluginTypeError, match="pass an instance"):
        GraphBuilder().set_plugins([Monitor])  # type: ignore[list-item]


def test_graph_constructor_accepts_plugins():
    monitor = Monitor()
    builder = GraphBuilder()
    builder.add_node(agent("a"), "a")
    built = builder.build()
    graph = Graph(built.nodes, built.edges, built.entry_points, plugins=[monitor])
    graph("task")
    assert monitor.log == ["before a", "after a"]
