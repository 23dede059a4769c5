"""Orchestrators as graph nodes: interrupts raised deep inside travel out with unique ids and answers travel back."""

import itertools
import json
from typing import Any

from helpers import answer, answers

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, MultiAgentBase, MultiAgentResult, Status, Swarm
from strandslike.types.interrupt import name_uuid


def approval_tool(runs: list[Any]) -> Any:
    @tool(context=True)
    def cleanup(resource: str, tool_context: ToolContext) -> str:
        """Clean up a resource after approval.

        Args:
            resource: The resource.
        """
        response = tool_context.interrupt("approval", reason={"resource": resource})
        runs.append((resource, response))
        return f"{resource}: {response}"

    return cleanup


def text_agent(name: str, reply: str | None = None) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([text(reply or f"{name} done")])
    return Agent(name=name, model=model, callback_handler=None), model


def tool_agent(name: str, resource: str, runs: list[Any]) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel([tool_call("cleanup", tool_use_id="t1", resource=resource), text(f"{name} done")])
    return Agent(name=name, model=model, tools=[approval_tool(runs)], callback_handler=None), model


class Approve(HookProvider):
    """A `BeforeNodeCallEvent` approval hook for one node id."""

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id
        self.answers: list[Any] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id == self.node_id:
            response = event.interrupt("inner-approval", reason={"node": event.node_id})
            self.answers.append(response)
            if response != "y":
                event.cancel_node = "denied"


def chain(*nodes: tuple[str, Any], hooks: list[Any] | None = None, graph_id: str = "default_graph") -> Any:
    builder = GraphBuilder()
    for node_id, executor in nodes:
        builder.add_node(executor, node_id)
    for (source, _), (target, _) in itertools.pairwise(nodes):
        builder.add_edge(source, target)
    if hooks:
        builder.set_hook_providers(hooks)
    builder.set_graph_id(graph_id)
    return builder.build()


async def test_an_inner_graph_node_tool_interrupt_surfaces_in_the_outer_graph_and_resumes() -> None:
    runs: list[Any] = []
    worker, worker_model = tool_agent("worker", "db", runs)
    inner = chain(("worker", worker), graph_id="inner")
    start, start_model = text_agent("start")
    end, end_model = text_agent("end")
    outer = chain(("start", start), ("inner", inner), ("end", end), graph_id="outer")

    paused = await outer.invoke_async("go")

    assert paused.status == Status.INTERRUPTED
    [interrupt] = paused.interrupts
    inner_id = f"v1:node:{name_uuid('worker')}:v1:tool_call:t1:{name_uuid('approval')}"
    assert interrupt.id == f"v1:node:{name_uuid('inner')}:{inner_id}"
    assert (interrupt.name, interrupt.reason) == ("approval", {"resource": "db"})
    inner_node = paused.results["inner"]
    assert inner_node.status == Status.INTERRUPTED
    assert inner_node.result.status == Status.INTERRUPTED
    assert inner_node.result.results["worker"].status == Status.INTERRUPTED
    assert (start_model.calls, worker_model.calls, end_model.calls) == (1, 1, 0)

    done = await outer.invoke_async([answer(interrupt, "y")])

    assert done.status == Status.COMPLETED
    assert runs == [("db", "y")]
    assert (start_model.calls, worker_model.calls, end_model.calls) == (1, 2, 1)
    assert done.results["inner"].status == Status.COMPLETED
    assert done.results["inner"].result.results["worker"].status == Status.COMPLETED
    assert [n.node_id for n in done.execution_order] == ["start", "inner", "end"]
    assert "worker done" in str(end_model.requests[0].messages[0])  # nested results feed the next node
    assert [r.message["content"] for r in done.results["inner"].get_agent_results()] == [[{"text": "worker done"}]]


async def test_an_inner_graph_hook_interrupt_surfaces_in_the_outer_graph_and_resumes() -> None:
    worker, worker_model = text_agent("worker")
    hook = Approve("worker")
    inner = chain(("worker", worker), hooks=[hook], graph_id="inner")
    end, end_model = text_agent("end")
    outer = chain(("inner", inner), ("end", end), graph_id="outer")

    paused = await outer.invoke_async("go")

    assert paused.status == Status.INTERRUPTED
    [interrupt] = paused.interrupts
    hook_id = f"v1:before_node_call:{name_uuid('worker')}:{name_uuid('inner-approval')}"
    assert interrupt.id == f"v1:node:{name_uuid('inner')}:{hook_id}"
    assert interrupt.reason == {"node": "worker"}
    assert worker_model.calls == 0

    done = await outer.invoke_async(answers(paused.interrupts, "y"))

    assert done.status == Status.COMPLETED
    assert hook.answers == ["y"]
    assert (worker_model.calls, end_model.calls) == (1, 1)


async def test_a_denied_inner_hook_fails_the_inner_graph_node_and_the_outer_run() -> None:
    worker, worker_model = text_agent("worker")
    inner = chain(("worker", worker), hooks=[Approve("worker")], graph_id="inner")
    end, end_model = text_agent("end")
    outer = chain(("inner", inner), ("end", end), graph_id="outer")

    paused = await outer.invoke_async("go")
    done = await outer.invoke_async(answers(paused.interrupts, "n"))

    assert done.status == Status.FAILED
    assert done.results["inner"].status == Status.FAILED
    assert done.results["inner"].result.results["worker"].status == Status.FAILED
    assert "end" not in done.results
    assert (worker_model.calls, end_model.calls) == (0, 0)


async def test_two_nested_graphs_with_the_same_inner_ids_get_distinct_outer_ids() -> None:
    runs: list[Any] = []
    left_worker, _ = tool_agent("worker", "left", runs)
    right_worker, _ = tool_agent("worker", "right", runs)
    left = chain(("worker", left_worker), graph_id="left")
    right = chain(("worker", right_worker), graph_id="right")
    builder = GraphBuilder()
    builder.add_node(left, "left")
    builder.add_node(right, "right")
    outer = builder.build()

    paused = await outer.invoke_async("go")

    assert paused.status == Status.INTERRUPTED
    assert len({i.id for i in paused.interrupts}) == 2
    by_resource = {i.reason["resource"]: i for i in paused.interrupts}
    done = await outer.invoke_async([answer(by_resource["left"], "L"), answer(by_resource["right"], "R")])
    assert done.status == Status.COMPLETED
    assert sorted(runs) == [("left", "L"), ("right", "R")]


async def test_a_swarm_as_a_graph_node_interrupts_and_resumes() -> None:
    runs: list[Any] = []
    cleanup_model = ScriptedModel(
        [
            tool_call("cleanup", tool_use_id="t1", resource="db"),
            tool_call("handoff_to_agent", tool_use_id="h1", agent_name="reporter", message="report"),
            text("handed off"),
        ]
    )
    cleanup = Agent(name="cleanup", model=cleanup_model, tools=[approval_tool(runs)], callback_handler=None)
    reporter, reporter_model = text_agent("reporter", "all clean")
    swarm = Swarm([cleanup, reporter], id="team")
    end, end_model = text_agent("end")
    outer = chain(("team", swarm), ("end", end), graph_id="outer")

    paused = await outer.invoke_async("go")

    assert paused.status == Status.INTERRUPTED
    [interrupt] = paused.interrupts
    assert interrupt.id.startswith(f"v1:node:{name_uuid('team')}:v1:node:{name_uuid('cleanup')}:")
    assert paused.results["team"].status == Status.INTERRUPTED

    done = await outer.invoke_async([answer(interrupt, "y")])

    assert done.status == Status.COMPLETED
    assert runs == [("db", "y")]
    assert (cleanup_model.calls, reporter_model.calls, end_model.calls) == (3, 1, 1)
    team = done.results["team"].result
    assert [node.node_id for node in team.node_history] == ["cleanup", "reporter"]
    assert "all clean" in str(end_model.requests[0].messages[0])


async def test_a_swarm_hook_interrupt_inside_a_graph_node_resumes() -> None:
    reporter, reporter_model = text_agent("reporter", "all clean")
    hook = Approve("reporter")
    swarm = Swarm([reporter], hooks=[hook], id="team")
    outer = chain(("team", swarm), graph_id="outer")

    paused = await outer.invoke_async("go")
    assert paused.status == Status.INTERRUPTED
    assert reporter_model.calls == 0

    done = await outer.invoke_async(answers(paused.interrupts, "y"))
    assert done.status == Status.COMPLETED
    assert hook.answers == ["y"]
    assert reporter_model.calls == 1


async def test_three_levels_deep() -> None:
    runs: list[Any] = []
    worker, worker_model = tool_agent("worker", "deep", runs)
    level2 = chain(("worker", worker), graph_id="level2")
    level1 = chain(("level2", level2), graph_id="level1")
    outer = chain(("level1", level1), graph_id="outer")

    paused = await outer.invoke_async("go")
    [interrupt] = paused.interrupts
    assert interrupt.id.startswith(f"v1:node:{name_uuid('level1')}:v1:node:{name_uuid('level2')}:v1:node:")

    done = await outer.invoke_async([answer(interrupt, "y")])
    assert done.status == Status.COMPLETED
    assert runs == [("deep", "y")]
    assert worker_model.calls == 2


async def test_a_nested_graph_streams_its_events_wrapped_in_the_outer_node() -> None:
    runs: list[Any] = []
    worker, _ = tool_agent("worker", "db", runs)
    inner = chain(("worker", worker), graph_id="inner")
    outer = chain(("inner", inner), graph_id="outer")

    events = [event async for event in outer.stream_async("go")]

    assert events[0] == {"type": "multiagent_node_start", "node_id": "inner", "node_type": "multiagent"}
    wrapped = [event["event"] for event in events if event["type"] == "multiagent_node_stream"]
    assert all(event["node_id"] == "inner" for event in events if event["type"] == "multiagent_node_stream")
    assert wrapped[0] == {"type": "multiagent_node_start", "node_id": "worker", "node_type": "agent"}
    # The inner graph's own final result event is forwarded too, as its stream_async would end.
    assert [event["type"] for event in wrapped[-3:]] == [
        "multiagent_node_interrupt",
        "multiagent_node_stop",
        "multiagent_result",
    ]
    assert [event["type"] for event in events[-3:]] == [
        "multiagent_node_interrupt",
        "multiagent_node_stop",
        "multiagent_result",
    ]


async def test_an_interrupted_nested_result_round_trips_through_json() -> None:
    runs: list[Any] = []
    worker, _ = tool_agent("worker", "db", runs)
    outer = chain(("inner", chain(("worker", worker), graph_id="inner")), graph_id="outer")
    paused = await outer.invoke_async("go")

    restored = MultiAgentResult.from_dict(json.loads(json.dumps(paused.to_dict())))

    assert restored.status == Status.INTERRUPTED
    assert [(i.id, i.name, i.reason) for i in restored.interrupts] == [
        (i.id, i.name, i.reason) for i in paused.interrupts
    ]
    inner_result = restored.results["inner"].result
    assert isinstance(inner_result, MultiAgentResult)
    assert inner_result.results["worker"].status == Status.INTERRUPTED
    assert inner_result.results["worker"].result.stop_reason == "interrupt"


async def test_a_strands_style_custom_orchestrator_works_as_a_graph_node() -> None:
    class Echo(MultiAgentBase):
        def __init__(self) -> None:
            self.id = "echo"
            self.calls: list[Any] = []

        async def invoke_async(
            self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any
        ) -> MultiAgentResult:
            self.calls.append(task)
            return MultiAgentResult(status=Status.COMPLETED)

    echo = Echo()
    end, end_model = text_agent("end")
    outer = chain(("echo", echo), ("end", end))

    result = await outer.invoke_async("go")

    assert result.status == Status.COMPLETED
    assert echo.calls == ["go"]
    assert end_model.calls == 1
    assert [event async for event in echo.stream_async("again")][-1]["result"].status == Status.COMPLETED
