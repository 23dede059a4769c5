"""What an orchestrator persists of its nodes, and how it finds their agents' tool journals.

- `snapshot_executor` / `restore_executor`: a node's agent (conversation, state, interrupt state, model state,
  conversation-manager state) or nested orchestrator, as it travels inside the orchestrator's own state.
- `InitialState`: an agent as it was built, for the fresh node runs that reset it.
- `node_journals`: every agent node's `ToolJournal` by node path (``"research"``, ``"outer/inner"``), the seam a
  session manager uses to journal node agents' tool bodies in the orchestrator's log.
- `node_agents` / `omitting_messages`: the agents among a node set by node path, and a scope in which
  `snapshot_executor` leaves the conversation of chosen agents out (`serialize_state_parts`, the seam a session
  manager uses to write a node's new messages only, not every conversation, with each node tool call).
- `in_flight`: whether a restored node agent was running a tool when its process died, so that the node is
  continued rather than reset and its model learns that the tool's outcome is unknown.
"""

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ..agent._prompt import dangling_tool_uses
from ..agent.agent import Agent
from ..agent.state import AgentState
from ..tools.journal import ToolJournal
from .base import MultiAgentBase


def path_part(node_id: str) -> str:
    """Return a node id as one part of a node path: ``%`` and ``/`` escaped, so paths split back unambiguously."""
    if "%" in node_id or "/" in node_id:
        return node_id.replace("%", "%25").replace("/", "%2F")
    return node_id


def node_journals(nodes: dict[str, Any]) -> dict[str, ToolJournal]:
    """Return the tool journals of the agents among ``nodes`` (node id -> executor), nested ones included."""
    journals: dict[str, ToolJournal] = {}
    for node_id, executor in nodes.items():
        part = path_part(node_id)
        if isinstance(executor, Agent):
            journals[part] = executor.tool_journal
        elif isinstance(executor, MultiAgentBase):
            for inner, journal in executor.tool_journals().items():
                journals[f"{part}/{inner}"] = journal
    return journals


# The ids of the agents whose conversation `snapshot_executor` leaves out, in this context (see `omitting_messages`).
_OMITTED: ContextVar[frozenset[int]] = ContextVar("strandslike_omitted_conversations", default=frozenset())


@contextmanager
def omitting_messages(agents: Iterator[Agent] | list[Agent]) -> Iterator[None]:
    """Within this scope (this thread or task only), `snapshot_executor` leaves out these agents' ``messages``."""
    token = _OMITTED.set(frozenset(id(agent) for agent in agents))
    try:
        yield
    finally:
        _OMITTED.reset(token)


def node_agents(nodes: dict[str, Any]) -> dict[str, Agent]:
    """Return the agents among ``nodes`` (node id -> executor) by node path, those of nested Graphs and Swarms too.

    A nested orchestrator that is not a Graph or Swarm is not looked into: its `serialize_state` is its own.
    """
    from ._orchestrator import Orchestrator  # imports this module

    agents: dict[str, Agent] = {}
    for node_id, executor in nodes.items():
        part = path_part(node_id)
        if isinstance(executor, Agent):
            agents[part] = executor
        elif isinstance(executor, Orchestrator):
            for inner, agent in executor._node_agents().items():
                agents[f"{part}/{inner}"] = agent
    return agents


def in_flight(executor: Any) -> bool:
    """Whether a node's agent was restored in the middle of a tool batch that a process died in.

    Its conversation ends with tool calls an earlier process started (their intents are on record) and never
    answered. Such a node is continued, not reset and not given a new prompt: it runs that batch again as an
    agent does for ``agent(None)``, so a tool that finished gets its recorded result, one cut short is reported to
    the model as unknown (or run again, if it is idempotent), and one that never started runs.
    """
    if not isinstance(executor, Agent) or executor._interrupt_state.activated:
        return False
    journal = executor.tool_journal
    for tool_use_id in dangling_tool_uses(executor.messages):
        attempt = journal.restored(tool_use_id)
        if attempt is not None and attempt.outcome != "interrupted":
            return True
    return False


def snapshot_executor(executor: Any) -> dict[str, Any]:
    """Capture what a node needs to resume in another process: an agent's conversation and states."""
    if isinstance(executor, Agent):
        manager = executor.conversation_manager
        snapshot: dict[str, Any] = {"type": "agent"}
        if id(executor) not in _OMITTED.get():
            snapshot["messages"] = copy.deepcopy(executor.messages)
        return {
            **snapshot,
            "state": executor.state.get(),
            "interrupt_state": executor._interrupt_state.to_dict(),
            "model_state": copy.deepcopy(executor._model_state),
            "conversation_manager_state": manager.get_state() if manager is not None else None,
        }
    if isinstance(executor, MultiAgentBase):
        return {"type": "multiagent", "state": executor.serialize_state()}
    return {"type": "unknown"}


def restore_executor(executor: Any, data: dict[str, Any]) -> None:
    """Restore a node captured by `snapshot_executor`."""
    if data.get("type") == "agent" and isinstance(executor, Agent):
        executor.messages = copy.deepcopy(data.get("messages", []))
        executor.state = AgentState(data.get("state") or {})
        executor._interrupt_state.load_dict(data.get("interrupt_state") or {})
        executor._model_state = dict(data.get("model_state") or {})
        manager_state = data.get("conversation_manager_state")
        if manager_state and executor.conversation_manager is not None:
            executor.conversation_manager.restore_from_session(manager_state)
    elif data.get("type") == "multiagent" and isinstance(executor, MultiAgentBase):
        executor.deserialize_state(data["state"])


class InitialState:
    """An agent's conversation and state as built, for resetting it before a fresh node run."""

    def __init__(self, executor: Any) -> None:
        # A deep copy: a snapshot shares the live interrupt state's lists, which the agent goes on changing.
        self.data = copy.deepcopy(snapshot_executor(executor)) if isinstance(executor, Agent) else None

    def reset(self, executor: Any) -> None:
        """Put the agent back as it was built (interrupt state cleared)."""
        if self.data is not None and isinstance(executor, Agent):
            restore_executor(executor, self.data)
            executor._interrupt_state.deactivate()
