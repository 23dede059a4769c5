"""The Swarm and Graph approval examples of the interrupts guide, with only the import root changed.

`input()` is replaced by a scripted answer and each agent gets a `ScriptedModel`; everything else is the guide's
code. Unlike Strands 1.62 (whose Graph raises on `cancel_node`), a denied node is FAILED in both orchestrators and
the run returns a FAILED result holding every node result.
"""

import json
from typing import Any

import pytest

from strandslike import Agent
from strandslike.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text
from strandslike.multiagent import GraphBuilder, Status, Swarm

DENIED = "User denied permission to cleanup resources"


class ApprovalHook(HookProvider):
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id != "cleanup":
            return

        approval = event.interrupt(f"{self.app_name}-approval", reason={"resources": "example"})
        if approval.lower() != "y":
            event.cancel_node = DENIED


def drive(orchestrator: Any, task: str, user_input: str) -> tuple[Any, list[Any]]:
    """The guide's resume loop, with ``input()`` replaced by ``user_input``; returns the result and the prompts."""
    asked: list[Any] = []
    result = orchestrator(task)
    while result.status == Status.INTERRUPTED:
        responses = []
        for interrupt in result.interrupts:
            if interrupt.name == "myapp-approval":
                asked.append(interrupt.reason)
                responses.append(
                    {
                        "interruptResponse": {
                            "interruptId": interrupt.id,
                            "response": user_input,
                        },
                    },
                )

        result = orchestrator(responses)
    return result, asked


def build_swarm(cleanup_model: ScriptedModel) -> Swarm:
    return Swarm(
        [
            Agent(
                name="cleanup",
                system_prompt="You clean up resources older than 5 days.",
                callback_handler=None,
                model=cleanup_model,
            ),
        ],
        hooks=[ApprovalHook("myapp")],
    )


def build_graph(inspector_model: ScriptedModel, cleanup_model: ScriptedModel) -> Any:
    inspector_agent = Agent(
        name="inspector", system_prompt="You inspect resources.", callback_handler=None, model=inspector_model
    )
    cleanup_agent = Agent(
        name="cleanup",
        system_prompt="You clean up resources older than 5 days.",
        callback_handler=None,
        model=cleanup_model,
    )

    builder = GraphBuilder()
    builder.add_node(inspector_agent, "inspector")
    builder.add_node(cleanup_agent, "cleanup")
    builder.add_edge("inspector", "cleanup")
    builder.set_entry_point("inspector")
    builder.set_hook_providers([ApprovalHook("myapp")])
    return builder.build()


@pytest.mark.parametrize("answer", ["y", "Y"])
def test_swarm_example_approved_runs_the_cleanup_agent(answer: str) -> None:
    model = ScriptedModel([text("Cleaned up 3 resources.")])
    swarm = build_swarm(model)

    result, asked = drive(swarm, "Clean up my resources", answer)

    assert asked == [{"resources": "example"}]
    assert result.status == Status.COMPLETED
    assert result.interrupts == []
    message = result.results["cleanup"].result.message
    assert message == {"role": "assistant", "content": [{"text": "Cleaned up 3 resources."}]}
    assert json.loads(json.dumps(message, indent=2)) == message  # the guide prints it with json.dumps
    assert result.results["cleanup"].status == Status.COMPLETED
    assert model.calls == 1
    assert [node.node_id for node in result.node_history] == ["cleanup"]


@pytest.mark.parametrize("answer", ["n", "N", ""])
def test_swarm_example_denied_fails_the_cleanup_node_without_raising(answer: str) -> None:
    model = ScriptedModel([])
    swarm = build_swarm(model)

    result, asked = drive(swarm, "Clean up my resources", answer)

    assert asked == [{"resources": "example"}]
    assert result.status == Status.FAILED
    assert result.interrupts == []
    node = result.results["cleanup"]
    assert node.status == Status.FAILED
    assert isinstance(node.result, Exception)
    assert str(node.result) == DENIED
    assert model.calls == 0


def test_graph_example_approved_runs_inspector_then_cleanup() -> None:
    inspector = ScriptedModel([text("Found 3 old resources.")])
    cleanup = ScriptedModel([text("Cleaned up 3 resources.")])
    graph = build_graph(inspector, cleanup)

    result, asked = drive(graph, "Inspect and clean up my resources", "y")

    assert asked == [{"resources": "example"}]
    assert result.status == Status.COMPLETED
    assert result.results["cleanup"].result.message == {
        "role": "assistant",
        "content": [{"text": "Cleaned up 3 resources."}],
    }
    assert result.results["inspector"].result.message["content"] == [{"text": "Found 3 old resources."}]
    assert [node.node_id for node in result.execution_order] == ["inspector", "cleanup"]
    assert (result.completed_nodes, result.failed_nodes, result.total_nodes) == (2, 0, 2)
    # The inspector ran once (not again on resume) and the cleanup agent got the inspector's output.
    assert (inspector.calls, cleanup.calls) == (1, 1)
    first_prompt = json.dumps(cleanup.requests[0].messages[0])
    assert "Found 3 old resources." in first_prompt
    assert "Inspect and clean up my resources" in first_prompt


def test_graph_example_denied_fails_cleanup_and_keeps_every_result() -> None:
    inspector = ScriptedModel([text("Found 3 old resources.")])
    cleanup = ScriptedModel([])
    graph = build_graph(inspector, cleanup)

    # Strands 1.62 raises out of the graph here; strandslike returns a FAILED result instead.
    result, asked = drive(graph, "Inspect and clean up my resources", "n")

    assert asked == [{"resources": "example"}]
    assert result.status == Status.FAILED
    assert result.interrupts == []
    assert set(result.results) == {"inspector", "cleanup"}
    assert result.results["inspector"].status == Status.COMPLETED
    assert result.results["cleanup"].status == Status.FAILED
    assert str(result.results["cleanup"].result) == DENIED
    assert (result.completed_nodes, result.failed_nodes) == (1, 1)
    assert (inspector.calls, cleanup.calls) == (1, 0)


async def test_graph_example_runs_from_async_code_too() -> None:
    # The guide's blocking calls also work inside a running event loop (a notebook, an async handler).
    graph = build_graph(ScriptedModel([text("Found.")]), ScriptedModel([text("Cleaned.")]))
    result, _ = drive(graph, "Inspect and clean up my resources", "y")
    assert result.status == Status.COMPLETED
