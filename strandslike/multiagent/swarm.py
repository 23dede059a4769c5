"""`Swarm`: agents that hand a task to one another, one at a time, through an injected handoff tool.

Deliberately unlike Strands 1.62: with ``preserve_node_history=True`` each agent keeps its own conversation across
its turns and across invocations (Strands resets every node before each run, harness-sdk#4295); `cancel_node`, a
node's exception and a node timeout mark the node FAILED and never raise.
"""

import copy
import functools
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from .._trace import trace_attribute_values
from ..agent.agent import Agent
from ..hooks.registry import HookProvider
from ..plugins.multiagent_plugin import MultiAgentPlugin
from ..tools.decorator import tool
from ..types.content import ContentBlock
from ..types.interrupt import InterruptResponseContent
from ..types.streaming import Metrics, Usage
from ._nodes import in_flight
from ._orchestrator import InitialState, Orchestrator, accumulate
from .base import Emit, MultiAgentResult, NodeResult, Status, zero_metrics, zero_usage

logger = logging.getLogger(__name__)

HANDOFF_TOOL_NAME = "handoff_to_agent"


@dataclass(eq=False)
class SwarmNode:
    """A swarm member.

    Attributes:
        node_id: The agent's name.
        executor: The agent.
    """

    node_id: str
    executor: Agent
    swarm: "Swarm | None" = None

    def __post_init__(self) -> None:
        self._initial = InitialState(self.executor)

    def __hash__(self) -> int:
        return hash(self.node_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SwarmNode) and other.node_id == self.node_id

    def __str__(self) -> str:
        return self.node_id

    def __repr__(self) -> str:
        return f"SwarmNode(node_id={self.node_id!r})"

    def reset_executor_state(self) -> None:
        """Put the agent back as it was built."""
        self._initial.reset(self.executor)


@dataclass
class SharedContext:
    """Knowledge the agents share through handoffs, by contributing node."""

    context: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_context(self, node: SwarmNode, key: str, value: Any) -> None:
        """Record ``value`` under ``key`` for ``node``.

        Raises:
            ValueError: The key is empty or not a string, or the value is not JSON-serializable.
        """
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"Shared context keys must be non-empty strings, got {key!r}")
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Value is not JSON serializable: {type(value).__name__}. "
                "Only JSON-compatible types (str, int, float, bool, list, dict, None) are allowed."
            ) from exc
        self.context.setdefault(node.node_id, {})[key] = value


@dataclass
class SwarmState:
    """The state of a swarm run."""

    current_node: SwarmNode | None
    task: Any
    completion_status: Status = Status.PENDING
    shared_context: SharedContext = field(default_factory=SharedContext)
    node_history: list[SwarmNode] = field(default_factory=list)
    start_time: float = field(default_factory=time.time)
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: Usage = field(default_factory=zero_usage)
    accumulated_metrics: Metrics = field(default_factory=zero_metrics)
    execution_time: int = 0
    handoff_node: SwarmNode | None = None
    handoff_message: str | None = None

    def should_continue(
        self,
        *,
        max_handoffs: int,
        max_iterations: int,
        execution_timeout: float,
        repetitive_handoff_detection_window: int,
        repetitive_handoff_min_unique_agents: int,
    ) -> tuple[bool, str]:
        """Return whether another node may run, and why not."""
        if len(self.node_history) >= max_handoffs:
            return False, f"Max handoffs reached: {max_handoffs}"
        if len(self.node_history) >= max_iterations:
            return False, f"Max iterations reached: {max_iterations}"
        if time.time() - self.start_time > execution_timeout:
            return False, f"Execution timed out: {execution_timeout}s"
        window = repetitive_handoff_detection_window
        if window > 0 and len(self.node_history) >= window:
            unique = len(set(self.node_history[-window:]))
            if unique < repetitive_handoff_min_unique_agents:
                return False, f"Repetitive handoff: {unique} unique nodes out of {window} recent iterations"
        return True, "Continuing"


@dataclass
class SwarmResult(MultiAgentResult):
    """A swarm's result, with the agents in the order they ran."""

    node_history: list[SwarmNode] = field(default_factory=list)


class Swarm(Orchestrator):
    """Agents that collaborate by handing the task to one another; interruptible at every node."""

    def __init__(
        self,
        nodes: list[Agent],
        *,
        entry_point: Agent | None = None,
        max_handoffs: int = 20,
        max_iterations: int = 20,
        execution_timeout: float = 900.0,
        node_timeout: float = 300.0,
        repetitive_handoff_detection_window: int = 0,
        repetitive_handoff_min_unique_agents: int = 0,
        session_manager: Any = None,
        hooks: list[HookProvider] | None = None,
        id: str = "default_swarm",
        trace_attributes: Mapping[str, Any] | None = None,
        plugins: list[MultiAgentPlugin] | None = None,
        preserve_node_history: bool = False,
    ) -> None:
        """Build a swarm of agents (node ids are the agents' names, which must be unique).

        Raises:
            ValueError: Duplicate names or instances, an entry point that is not a member, or a member that
                already has a tool named ``handoff_to_agent``.
        """
        self.max_handoffs = max_handoffs
        self.max_iterations = max_iterations
        self.execution_timeout = execution_timeout
        self.node_timeout = node_timeout
        self.repetitive_handoff_detection_window = repetitive_handoff_detection_window
        self.repetitive_handoff_min_unique_agents = repetitive_handoff_min_unique_agents
        self.preserve_node_history = preserve_node_history
        self.trace_attributes = trace_attribute_values(trace_attributes)
        self._setup(id, hooks, session_manager)
        self.nodes: dict[str, SwarmNode] = {}
        for agent in nodes:
            if agent.name in self.nodes:
                raise ValueError(f"Node ID '{agent.name}' is not unique. Each agent must have a unique name.")
            self.nodes[agent.name] = SwarmNode(agent.name, agent, self)
        self._check_node_executors({node_id: node.executor for node_id, node in self.nodes.items()}, "Swarm")
        if entry_point is not None and not any(node.executor is entry_point for node in self.nodes.values()):
            raise ValueError("Entry point agent not found in swarm nodes")
        self.entry_point = entry_point
        self._inject_handoff_tool()
        self.state = SwarmState(current_node=self._initial_node(), task="")
        self._fire_initialized(plugins)

    def _executor(self, node_id: str) -> Any:
        return self.nodes[node_id].executor

    def _node_ids(self) -> list[str]:
        return list(self.nodes)

    def _initial_node(self) -> SwarmNode:
        if self.entry_point is not None:
            return next(node for node in self.nodes.values() if node.executor is self.entry_point)
        return next(iter(self.nodes.values()))

    def _inject_handoff_tool(self) -> None:
        for node in self.nodes.values():
            if HANDOFF_TOOL_NAME in node.executor.tool_registry:
                raise ValueError(
                    f"Tool name conflict: agent {node.node_id!r} already has a tool named {HANDOFF_TOOL_NAME!r}"
                )
        swarm = self

        # Idempotent: it only records the handoff in memory, so a handoff cut short by a crash simply runs again.
        @tool(name=HANDOFF_TOOL_NAME, idempotent=True)
        async def handoff_to_agent(
            agent_name: str, message: str, context: dict[str, Any] | None = None
        ) -> dict[str, Any]:
            """Transfer control to another agent in the swarm for specialized help.

            Args:
                agent_name: Name of the agent to hand off to.
                message: What needs to be done and why you are handing off.
                context: Additional context to share with the next agent.
            """
            target = swarm.nodes.get(agent_name)
            if target is None:
                return {"status": "error", "content": [{"text": f"Error: Agent '{agent_name}' not found in swarm"}]}
            try:
                swarm._handoff(target, message, context or {})
            except ValueError as exc:
                return {"status": "error", "content": [{"text": f"Error in handoff: {exc}"}]}
            return {"status": "success", "content": [{"text": f"Handing off to {agent_name}: {message}"}]}

        for node in self.nodes.values():
            node.executor.tool_registry.register_tool(handoff_to_agent)

    def _handoff(self, target: SwarmNode, message: str, context: dict[str, Any]) -> None:
        state = self.state
        if state.completion_status != Status.EXECUTING or state.current_node is None:
            return
        for key, value in context.items():
            state.shared_context.add_context(state.current_node, key, value)
        state.handoff_node = target
        state.handoff_message = message

    async def _run(
        self,
        task: Any,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        node_answers: dict[str, list[InterruptResponseContent]] | None,
    ) -> SwarmResult:
        resuming = node_answers is not None
        if not resuming:
            self.state = SwarmState(current_node=self._initial_node(), task=task)
        state = self.state
        state.start_time = time.time()
        # A resumed run whose last node had finished it (its process died before the run's end was written) has
        # nothing left to run: it only ends.
        finished = resuming and state.completion_status in (Status.COMPLETED, Status.FAILED)
        if not finished:
            state.completion_status = Status.EXECUTING
        started = time.perf_counter()
        with anyio.move_on_after(self.execution_timeout) as scope:
            while state.current_node is not None and not finished:
                node = state.current_node
                allowed, reason = state.should_continue(
                    max_handoffs=self.max_handoffs,
                    max_iterations=self.max_iterations,
                    execution_timeout=self.execution_timeout,
                    repetitive_handoff_detection_window=self.repetitive_handoff_detection_window,
                    repetitive_handoff_min_unique_agents=self.repetitive_handoff_min_unique_agents,
                )
                if not allowed:
                    logger.warning("swarm_id=<%s> | %s", self.id, reason)
                    state.completion_status = Status.FAILED
                    break
                answers = (node_answers or {}).get(node.node_id)
                previous = state.results.get(node.node_id)
                waiting_inside = (
                    resuming
                    and previous is not None
                    and previous.status == Status.INTERRUPTED
                    and not all(i.id.startswith("v1:before_node_call:") for i in previous.interrupts)
                )
                if waiting_inside and answers is None:
                    state.completion_status = Status.INTERRUPTED  # nothing answered for this node yet
                    break
                if not waiting_inside:
                    answers = None  # answered, then finished before the run stopped (a crash): it replays nothing
                if not self.preserve_node_history and not waiting_inside and not in_flight(node.executor):
                    # Every execution starts from the agent as built (Strands); one cut short by a crash while a
                    # tool ran is continued instead, so its model learns that the tool's outcome is unknown.
                    node.reset_executor_state()
                resuming = False
                result = await self._run_node(
                    node.node_id,
                    node.executor,
                    self._node_input(node),
                    invocation_state,
                    emit,
                    answers=answers,
                    node_timeout=self.node_timeout,
                    on_finished=functools.partial(self._finished, node),
                )
                node_answers = None
                if result.status == Status.INTERRUPTED:
                    state.results[node.node_id] = result
                    state.completion_status = Status.INTERRUPTED
                    break
                if state.completion_status != Status.EXECUTING:
                    break
                if emit is not None:
                    emit(
                        {
                            "type": "multiagent_handoff",
                            "from_node_ids": [node.node_id],
                            "to_node_ids": [state.current_node.node_id if state.current_node else ""],
                            "message": state.handoff_message,
                        }
                    )
        if scope.cancelled_caught:
            logger.warning("swarm_id=<%s> | execution timed out after %ss", self.id, self.execution_timeout)
            state.completion_status = Status.FAILED
        state.execution_time += round((time.perf_counter() - started) * 1000)
        if state.completion_status == Status.INTERRUPTED:
            self._interrupt_state.activate()
        else:
            self._interrupt_state.deactivate()
        return self._build_result()

    def _finished(self, node: SwarmNode, result: NodeResult) -> None:
        """Commit a node's turn (completed or failed), handoff included, before `AfterNodeCallEvent` persists it.

        The state written then says where the run goes on, so a process that dies after it never runs the node
        again: the next node is current, or the run is completed or failed.
        """
        state = self.state
        state.results[node.node_id] = result
        state.node_history.append(node)
        accumulate(state.accumulated_usage, state.accumulated_metrics, result)
        if result.status == Status.FAILED:
            state.completion_status = Status.FAILED
            return
        target = state.handoff_node
        if target is None:
            state.completion_status = Status.COMPLETED
            return
        state.current_node = target
        state.handoff_node = None

    def _node_input(self, target: SwarmNode) -> Any:
        context: list[ContentBlock] = [{"text": f"Context:\n{self._context_text(target)}"}]
        task = self.state.task
        if isinstance(task, list):  # a multi-modal task: its blocks follow the context
            return context + [block for block in task if isinstance(block, dict) and "interruptResponse" not in block]
        return self._context_text(target)

    def _context_text(self, target: SwarmNode) -> str:
        state = self.state
        text = ""
        if state.handoff_message:
            text += f"Handoff Message: {state.handoff_message}\n\n"
        if isinstance(state.task, str):
            text += f"User Request: {state.task}\n\n"
        elif isinstance(state.task, list):
            text += "User Request: Multi-modal task\n\n"
        if state.node_history:
            text += f"Previous agents who worked on this: {' → '.join(n.node_id for n in state.node_history)}\n\n"
        shared = {node_id: values for node_id, values in state.shared_context.context.items() if values}
        if shared:
            text += "Shared knowledge from previous agents:\n"
            for node_id, values in shared.items():
                text += f"• {node_id}: {values}\n"
            text += "\n"
        text += self._others_text(target.node_id)
        text += (
            "You have access to swarm coordination tools if you need help from other agents. "
            "If you don't hand off to another agent, the swarm will consider the task complete."
        )
        return text

    @functools.lru_cache(maxsize=256)  # noqa: B019 - members are fixed at construction; the swarm owns the cache
    def _others_text(self, node_id: str) -> str:
        """Describe the other members of the swarm to ``node_id`` (fixed for the swarm's life)."""
        others = [node for other_id, node in self.nodes.items() if other_id != node_id]
        if not others:
            return ""
        text = "Other agents available for collaboration:\n"
        for node in others:
            text += f"Agent name: {node.node_id}."
            if node.executor.description:
                text += f" Agent description: {node.executor.description}"
            text += "\n"
        return text + "\n"

    def _build_result(self) -> SwarmResult:
        state = self.state
        return SwarmResult(
            status=state.completion_status,
            results=dict(state.results),
            accumulated_usage=copy.copy(state.accumulated_usage),
            accumulated_metrics=copy.copy(state.accumulated_metrics),
            execution_count=len(state.node_history),
            execution_time=state.execution_time,
            interrupts=self.pending_interrupts if state.completion_status == Status.INTERRUPTED else [],
            node_history=list(state.node_history),
        )

    # -- persistence ------------------------------------------------------------------------------------------------

    def serialize_state(self) -> dict[str, Any]:
        """Return the run's state, each node's result and each node's agent state, as JSON-serializable data."""
        state = self.state
        return {
            "type": "swarm",
            "id": self.id,
            "status": state.completion_status.value,
            "current_node": state.current_node.node_id if state.current_node else None,
            "node_history": [node.node_id for node in state.node_history],
            "node_results": {node_id: result.to_dict() for node_id, result in state.results.items()},
            "current_task": state.task,
            "accumulated_usage": dict(state.accumulated_usage),
            "accumulated_metrics": dict(state.accumulated_metrics),
            "execution_time": state.execution_time,
            "context": {
                "shared_context": state.shared_context.context,
                "handoff_node": state.handoff_node.node_id if state.handoff_node else None,
                "handoff_message": state.handoff_message,
            },
            **self._persisted_nodes(),
        }

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        """Restore a swarm saved by `serialize_state` (agent names must match).

        Raises:
            ValueError: The payload names agents this swarm does not have.
        """
        self._restore_nodes(payload, "swarm", "agents", also_named=payload.get("node_history", []))
        context = payload.get("context", {})
        current = payload.get("current_node")
        handoff = context.get("handoff_node")
        self.state = SwarmState(
            current_node=self.nodes[current] if current in self.nodes else self._initial_node(),
            task=payload.get("current_task", ""),
            completion_status=Status(payload.get("status", "pending")),
            shared_context=SharedContext(dict(context.get("shared_context", {}))),
            node_history=[self.nodes[node_id] for node_id in payload.get("node_history", [])],
            results={node_id: NodeResult.from_dict(raw) for node_id, raw in payload.get("node_results", {}).items()},
            accumulated_usage={**zero_usage(), **payload.get("accumulated_usage", {})},
            accumulated_metrics={**zero_metrics(), **payload.get("accumulated_metrics", {})},
            execution_time=int(payload.get("execution_time", 0)),
            handoff_node=self.nodes.get(handoff) if handoff else None,
            handoff_message=context.get("handoff_message"),
        )
