"""What the server runs: an `Agent`, or a Graph or Swarm, behind one small interface.

`Target` gives the server what it needs from either: the interrupt state it resumes, the open interrupts with the
node that raised each one, the agents whose conversations and tool results it reports, and the run itself.
Interrupts raised inside a node are held by the orchestrator under ``v1:node:...`` ids; the details a client
needs (message, schema, expiry, tool call) live on the node's own interrupt, found through the orchestrator's
routes.
"""

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, cast

import anyio
from ag_ui.core import Message

from ...agent.agent import Agent
from ...interrupt import Interrupt
from ...interrupt._state import _InterruptState
from ...multiagent._orchestrator import Orchestrator, node_interrupt_prefix
from ...session.repository_session_manager import RepositorySessionManager
from ...types.tools import ToolUse
from ._errors import AGENT_FACTORY_ERROR, ProtocolError
from ._messages import agent_messages

Runnable = Agent | Orchestrator
_ROUTES = "node_interrupts"


@dataclass(frozen=True)
class Scope:
    """Where events and messages come from: the agent itself, or a node of an orchestration.

    Attributes:
        runnable: The agent or orchestrator.
        prefix: Prefix of the message ids of its messages (``""`` for a lone agent, ``"<node>:"`` in a node).
        name: The node id, shown as the author of the node's messages; None for a lone agent.
    """

    runnable: Runnable
    prefix: str = ""
    name: str | None = None

    def child(self, node_id: str) -> "Scope | None":
        """Return the scope of one of an orchestrator's nodes, or None if there is no such node."""
        if not isinstance(self.runnable, Orchestrator):
            return None
        node = getattr(self.runnable, "nodes", {}).get(node_id)
        executor = getattr(node, "executor", None)
        if not isinstance(executor, Agent | Orchestrator):
            return None
        return Scope(executor, f"{self.prefix}{node_id}:", node_id)


@dataclass(frozen=True)
class OpenInterrupt:
    """An interrupt of the run, as the server describes it to a client.

    Attributes:
        id: The id the resume names at the top level (the orchestrator's id for a node's interrupt).
        interrupt: The top-level interrupt (the one resume blocks are built from).
        detail: The interrupt with the details: the node's own interrupt for one raised inside a node.
        agent: The agent that raised ``detail``, if an agent did.
        node_id: The node it was raised in (or before), for an orchestration.
    """

    id: str
    interrupt: Interrupt
    detail: Interrupt
    agent: Agent | None
    node_id: str | None

    def pending_call(self) -> ToolUse | None:
        """Return the tool call ``detail`` is bound to, while it waits to run."""
        tool_use_id = self.detail.tool_use_id
        pending = self.agent._interrupt_state.pending_tool_execution if self.agent is not None else None
        if tool_use_id is None or pending is None:
            return None
        for block in pending.assistant_message["content"]:
            if "toolUse" in block and block["toolUse"]["toolUseId"] == tool_use_id:
                return block["toolUse"]
        return None


class Target:
    """The agent or orchestrator built for one request."""

    def __init__(self, runnable: Any, session_manager: RepositorySessionManager) -> None:
        """Check what the factory built.

        Raises:
            ProtocolError: It is not an Agent, Graph or Swarm, or it does not persist with ``session_manager``
                (``AGENT_FACTORY_ERROR``).
        """
        if not isinstance(runnable, Agent | Orchestrator):
            raise ProtocolError(
                AGENT_FACTORY_ERROR,
                f"The agent factory returned {type(runnable).__name__}; it must return an Agent, a Graph or a Swarm.",
            )
        if getattr(runnable, "session_manager", None) is not session_manager:
            raise ProtocolError(
                AGENT_FACTORY_ERROR,
                f"The agent factory built a {type(runnable).__name__} without the session manager it was given, so "
                "the thread would not be persisted between requests; pass it on: "
                "Agent(..., session_manager=session_manager) or GraphBuilder().set_session_manager(session_manager).",
            )
        self.runnable: Runnable = runnable
        self.root = Scope(runnable)
        self.session_manager = session_manager

    @property
    def state(self) -> _InterruptState:
        """The top-level interrupt state (the one a resume is applied to)."""
        return self.runnable._interrupt_state

    @property
    def interrupted(self) -> bool:
        """Whether the thread waits on interrupts: new input must resume them."""
        return self.state.activated

    def refuse_partial_resumes(self) -> None:
        """Make the run refuse a resume that leaves open interrupts unanswered (AG-UI rule 3)."""
        self.runnable.partial_resume = "refuse"

    # -- interrupts -------------------------------------------------------------------------------------------------

    def describe(self, interrupt_id: str) -> OpenInterrupt | None:
        """Return the interrupt of the current interrupt point with this (top-level) id, answered or not."""
        interrupt = self.state.interrupts.get(interrupt_id)
        if interrupt is None:
            return None
        return _describe(self.root, interrupt)

    def open_interrupts(self) -> list[OpenInterrupt]:
        """Return the interrupts the thread waits on, in the order they were raised."""
        return [_describe(self.root, interrupt) for interrupt in self.runnable.pending_interrupts]

    def waiting_interrupts(self) -> list[OpenInterrupt]:
        """Return what the thread waits on: its open interrupts, else the answered ones of a run that stopped.

        A thread whose interrupts were all answered, but whose run stopped before it finished (a crash, a hook
        that failed), waits for the same resume again; its interrupts are reported with the answers given.
        """
        if not self.state.activated:
            return []
        opened = self.open_interrupts()
        if opened:
            return opened
        return [_describe(self.root, interrupt) for interrupt in self.state.interrupts.values() if interrupt.answered]

    # -- agents, messages, state ------------------------------------------------------------------------------------

    def agents(self) -> list[tuple[Scope, Agent]]:
        """Return every agent with its scope: the agent itself, or every agent node (nested ones included)."""
        return _agents(self.root)

    def messages(self) -> list[Message]:
        """Return the conversation as AG-UI messages (every node's, in node order, for an orchestration)."""
        converted: list[Message] = []
        for scope, agent in self.agents():
            converted.extend(agent_messages(agent, scope.prefix, scope.name))
        return converted

    def state_snapshot(self) -> Any:
        """Return ``agent.state``, or each agent node's state by node id for an orchestration."""
        if isinstance(self.runnable, Agent):
            return self.runnable.state.get()
        return _node_states(self.runnable)

    # -- running ----------------------------------------------------------------------------------------------------

    def stream(self, prompt: Any) -> AsyncGenerator[dict[str, Any], None]:
        """Run (or resume) and yield the events of the run; the last one holds the result."""
        # Both stream_async methods are async generators, annotated as iterators.
        return cast(AsyncGenerator[dict[str, Any], None], self.runnable.stream_async(prompt))

    def begin(self, *, log_refusal: bool = True) -> None:
        """Claim the session for the whole request, through the session manager, before anything is checked or run.

        Args:
            log_refusal: Log a refused claim of an agent's session (False for a kept agent, rebuilt if refused).

        Raises:
            SessionConflictError: Another request (in this process or another) holds the session, or changed it
                since the agent was restored.
        """
        if isinstance(self.runnable, Agent):
            self.session_manager.begin_invocation(self.runnable, log_refusal=log_refusal)
        else:
            self.session_manager.begin_multi_agent_invocation(self.runnable)

    def end(self) -> None:
        """Persist what changed and release the session's claim."""
        if isinstance(self.runnable, Agent):
            self.session_manager.end_invocation(self.runnable)
        else:
            self.session_manager.end_multi_agent_invocation(self.runnable)

    async def end_async(self) -> None:
        """`end` from the event loop: directly when nothing blocking is left to do, else in a worker thread."""
        if isinstance(self.runnable, Agent):
            await self.session_manager.end_invocation_async(self.runnable)
        else:
            await anyio.to_thread.run_sync(self.session_manager.end_multi_agent_invocation, self.runnable)

    def is_synced(self) -> bool:
        """Whether this is an `Agent` exactly as its session holds it, between requests, so it may be kept.

        Only over a session manager that keeps the durable log contract: the next request's claim then confirms
        that nobody changed the session since (see `_cache`).
        """
        manager = self.session_manager
        return (
            isinstance(self.runnable, Agent)
            and bool(getattr(manager, "supports_claims", False))
            and manager.is_synced(self.runnable)
        )


def _describe(scope: Scope, interrupt: Interrupt) -> OpenInterrupt:
    """Find the details of a top-level interrupt: follow node routes down to the interrupt that was raised."""
    runnable = scope.runnable
    if isinstance(runnable, Agent):
        return OpenInterrupt(interrupt.id, interrupt, interrupt, runnable, None)
    route = runnable._interrupt_state.context.get(_ROUTES, {}).get(interrupt.id)
    if route is None:  # raised by the orchestrator's own BeforeNodeCallEvent hooks
        nodes = getattr(runnable, "nodes", {})
        node_id = next((n for n in nodes if interrupt.id.startswith(node_interrupt_prefix(n))), None)
        return OpenInterrupt(interrupt.id, interrupt, interrupt, None, node_id)
    node_id, inner_id = route
    child = scope.child(node_id)
    inner = child.runnable._interrupt_state.interrupts.get(inner_id) if child is not None else None
    if child is None or inner is None:
        return OpenInterrupt(interrupt.id, interrupt, interrupt, None, node_id)
    found = _describe(child, inner)
    return OpenInterrupt(interrupt.id, interrupt, found.detail, found.agent, node_id)


def _agents(scope: Scope) -> list[tuple[Scope, Agent]]:
    if isinstance(scope.runnable, Agent):
        return [(scope, scope.runnable)]
    found: list[tuple[Scope, Agent]] = []
    for node_id in getattr(scope.runnable, "nodes", {}):
        child = scope.child(node_id)
        if child is not None:
            found.extend(_agents(child))
    return found


def _node_states(orchestrator: Orchestrator) -> dict[str, Any]:
    states: dict[str, Any] = {}
    for node_id, node in getattr(orchestrator, "nodes", {}).items():
        executor = getattr(node, "executor", None)
        if isinstance(executor, Agent):
            states[node_id] = executor.state.get()
        elif isinstance(executor, Orchestrator):
            states[node_id] = _node_states(executor)
    return states
