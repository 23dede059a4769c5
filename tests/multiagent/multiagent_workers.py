"""Orchestrators on a file session, shared by the session tests and the child processes they start.

Each scenario builds a brand-new orchestrator with fresh agents, the way a stateless server does for every request:
``build(kind, storage_dir, phase)`` gives the agents the model turns of one phase only (``"pause"``: up to the
interrupt; ``"resume"``: what remains). The tool appends one JSON line per run to ``tools.log`` in the storage
directory, so runs can be counted across processes.

Run as a script, ``python multiagent_workers.py resume <kind> <storage_dir> <interrupt_id> <response>`` resumes the
saved orchestration and prints one JSON line describing the result.
"""

import json
import os
import sys
from pathlib import Path
from typing import Any

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.models.scripted import ScriptedTurn
from strandslike.multiagent import GraphBuilder, MultiAgentBase, MultiAgentResult, Status, Swarm
from strandslike.session import FileSessionManager

SESSION_ID = "multi"
KINDS = ("graph-hook", "graph-tool", "swarm-hook", "swarm-tool", "nested-tool")
DENIED = "User denied permission to cleanup resources"


class ApprovalHook(HookProvider):
    """The guide's approval hook on the ``cleanup`` node."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.approve)

    def approve(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id != "cleanup":
            return
        if event.interrupt("myapp-approval", reason={"resources": "example"}).lower() != "y":
            event.cancel_node = DENIED


def log_path(storage_dir: str | Path) -> Path:
    return Path(storage_dir) / "tools.log"


def tool_runs(storage_dir: str | Path) -> list[dict[str, Any]]:
    """Return the tool runs recorded under ``storage_dir``, in order."""
    log = log_path(storage_dir)
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def make_tool(storage_dir: str | Path) -> Any:
    @tool(context=True)
    def cleanup_resources(resource: str, tool_context: ToolContext) -> str:
        """Clean up a resource after the user approved it.

        Args:
            resource: The resource to clean up.
        """
        approval = tool_context.interrupt("myapp-approval", reason={"resources": resource})
        with open(log_path(storage_dir), "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"resource": resource, "approval": approval, "pid": os.getpid()}) + "\n")
        return f"cleaned {resource}" if approval == "y" else f"kept {resource}"

    return cleanup_resources


def scripts(kind: str, phase: str) -> dict[str, list[ScriptedTurn]]:
    """The turns each agent plays in one phase of a scenario."""
    swarm = kind.startswith("swarm")
    with_tool = kind.endswith("tool")
    if phase == "pause":
        inspector = [text("Found 3 old resources.")]
        if swarm:
            inspector = [
                tool_call("handoff_to_agent", tool_use_id="h1", agent_name="cleanup", message="clean"),
                text("ok"),
            ]
        cleanup = [tool_call("cleanup_resources", tool_use_id="t1", resource="db")] if with_tool else []
        return {"inspector": inspector, "cleanup": cleanup}
    return {"inspector": [], "cleanup": [text("Cleaned up 3 resources.")]}


def build(
    kind: str, storage_dir: str | Path, phase: str, *, session_id: str = SESSION_ID
) -> tuple[MultiAgentBase, dict[str, ScriptedModel]]:
    """Build a fresh orchestrator of ``kind`` on the file session, with the models of ``phase``."""
    models = {name: ScriptedModel(turns) for name, turns in scripts(kind, phase).items()}
    tools = [make_tool(storage_dir)] if kind.endswith("tool") else []
    inspector = Agent(name="inspector", model=models["inspector"], callback_handler=None)
    cleanup = Agent(name="cleanup", model=models["cleanup"], tools=tools, callback_handler=None)
    session = FileSessionManager(session_id, storage_dir=storage_dir)
    hooks = [ApprovalHook()] if kind.endswith("hook") else []
    if kind.startswith("swarm"):
        return Swarm([inspector, cleanup], hooks=hooks, session_manager=session, id="team"), models
    builder = GraphBuilder()
    builder.add_node(inspector, "inspector")
    if kind == "nested-tool":
        inner = GraphBuilder()
        inner.add_node(cleanup, "cleanup")
        inner.set_graph_id("inner")
        builder.add_node(inner.build(), "cleanup")
    else:
        builder.add_node(cleanup, "cleanup")
    builder.add_edge("inspector", "cleanup")
    builder.set_hook_providers(hooks)
    builder.set_session_manager(session)
    builder.set_graph_id("pipeline")
    return builder.build(), models


def cleanup_message(result: MultiAgentResult) -> Any:
    """Return the cleanup agent's last message, looking inside a nested graph."""
    node = result.results["cleanup"]
    agent_results = node.get_agent_results()
    return agent_results[-1].message if agent_results else None


def describe(result: MultiAgentResult, models: dict[str, ScriptedModel]) -> dict[str, Any]:
    """A JSON-serializable summary of a result."""
    return {
        "status": result.status.value,
        "interrupts": [{"id": i.id, "name": i.name, "reason": i.reason} for i in result.interrupts],
        "node_status": {node_id: node.status.value for node_id, node in result.results.items()},
        "message": cleanup_message(result) if "cleanup" in result.results else None,
        "model_calls": {name: model.calls for name, model in models.items()},
        "node_history": [node.node_id for node in getattr(result, "node_history", [])],
        "execution_order": [node.node_id for node in getattr(result, "execution_order", [])],
    }


def _resume(kind: str, storage_dir: str, interrupt_id: str, response: str) -> None:
    orchestrator, models = build(kind, storage_dir, "resume")
    restored = [i.id for i in orchestrator.pending_interrupts]  # type: ignore[attr-defined]
    result = orchestrator([{"interruptResponse": {"interruptId": interrupt_id, "response": response}}])
    summary = describe(result, models)
    summary["restored_interrupts"] = restored
    summary["completed"] = result.status == Status.COMPLETED
    sys.stdout.write(json.dumps(summary) + "\n")


def _pause(kind: str, storage_dir: str) -> None:
    orchestrator, models = build(kind, storage_dir, "pause")
    sys.stdout.write(json.dumps(describe(orchestrator("Inspect and clean up my resources"), models)) + "\n")


def main(argv: list[str]) -> None:
    """Run ``pause <kind> <storage_dir>`` or ``resume <kind> <storage_dir> <interrupt_id> <response>``."""
    command, *arguments = argv
    if command == "pause":
        _pause(*arguments)
    elif command == "resume":
        _resume(*arguments)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
