"""`Graph`: a deterministic orchestration of nodes along directed edges, built with `GraphBuilder`.

Execution runs in batches: every node whose dependencies are satisfied runs concurrently in one anyio task group,
then the next batch is computed from the nodes that completed. A node's fan-in decides when it is ready: ``"any"``
(Strands' default: any incoming edge from the batch that just completed, whose condition holds) or ``"all"``
(every parent completed in this run with its edge condition holding, one of them in the batch that just
completed). Live and resumed runs schedule by the same rule.

Deliberately unlike Strands 1.62: a node's exception, timeout or `cancel_node` marks that node FAILED and never
raises out of the graph; its successors do not run, independent branches finish, the final status is FAILED and
every node result is present, interrupted ones included (with status INTERRUPTED).
"""

import copy
import functools
import inspect
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import anyio

from .._identifier import validate_id
from .._trace import trace_attribute_values
from ..agent.agent import Agent
from ..hooks.registry import HookProvider
from ..plugins.multiagent_plugin import MultiAgentPlugin
from ..plugins.registry import as_list, check_plugin
from ..types.content import ContentBlock
from ..types.interrupt import InterruptResponseContent
from ..types.streaming import Metrics, Usage
from ._nodes import in_flight
from ._orchestrator import InitialState, Orchestrator, accumulate
from .base import Emit, MultiAgentBase, MultiAgentResult, NodeResult, Status, zero_metrics, zero_usage

logger = logging.getLogger(__name__)

FanIn = Literal["any", "all"]
EdgeCondition = Callable[..., bool]


@dataclass(eq=False)
class GraphNode:
    """A node of the graph: an agent or a nested orchestrator.

    Attributes:
        node_id: Unique id of the node.
        executor: The `Agent` or `MultiAgentBase` that runs it.
        dependencies: Nodes with an edge into this one.
        execution_status: Status of its latest execution.
        result: Result of its latest execution.
        execution_time: Milliseconds of its latest execution.
        fan_in: ``"any"`` or ``"all"`` (see the module docstring).
    """

    node_id: str
    executor: Agent | MultiAgentBase
    dependencies: set["GraphNode"] = field(default_factory=set)
    execution_status: Status = Status.PENDING
    result: NodeResult | None = None
    execution_time: int = 0
    fan_in: FanIn = "any"

    def __post_init__(self) -> None:
        self._initial = InitialState(self.executor)

    def __hash__(self) -> int:
        return hash(self.node_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphNode) and other.node_id == self.node_id

    def __repr__(self) -> str:
        return f"GraphNode(node_id={self.node_id!r}, status={self.execution_status.value})"

    def reset_executor_state(self) -> None:
        """Put the node's agent back as it was built, and its status to pending."""
        self._initial.reset(self.executor)
        self.execution_status = Status.PENDING
        self.result = None


@dataclass
class GraphEdge:
    """A directed edge, optionally conditional.

    Attributes:
        from_node: Source node.
        to_node: Target node.
        condition: ``f(state) -> bool``, or ``f(state, *, invocation_state) -> bool``; None always traverses.
    """

    from_node: GraphNode
    to_node: GraphNode
    condition: EdgeCondition | None = None

    def __hash__(self) -> int:
        return hash((self.from_node.node_id, self.to_node.node_id))

    def should_traverse(self, state: "GraphState", *, invocation_state: dict[str, Any] | None = None) -> bool:
        """Return whether the edge's condition holds."""
        if self.condition is None:
            return True
        if "invocation_state" in inspect.signature(self.condition).parameters:
            return bool(self.condition(state, invocation_state=invocation_state or {}))
        return bool(self.condition(state))


@dataclass
class GraphState:
    """The state of a graph run, given to edge conditions.

    Attributes:
        task: The task of the run.
        status: Status of the run.
        completed_nodes: Nodes that completed.
        failed_nodes: Nodes that failed.
        interrupted_nodes: Nodes waiting on interrupts.
        execution_order: Nodes in the order they finished.
        results: Latest result of each node.
    """

    task: Any = ""
    status: Status = Status.PENDING
    completed_nodes: set[GraphNode] = field(default_factory=set)
    failed_nodes: set[GraphNode] = field(default_factory=set)
    interrupted_nodes: set[GraphNode] = field(default_factory=set)
    execution_order: list[GraphNode] = field(default_factory=list)
    start_time: float = field(default_factory=time.time)
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: Usage = field(default_factory=zero_usage)
    accumulated_metrics: Metrics = field(default_factory=zero_metrics)
    execution_count: int = 0
    execution_time: int = 0
    total_nodes: int = 0
    edges: list[tuple[GraphNode, GraphNode]] = field(default_factory=list)
    entry_points: list[GraphNode] = field(default_factory=list)

    def should_continue(self, max_node_executions: int | None, execution_timeout: float | None) -> tuple[bool, str]:
        """Return whether the run may start another batch, and why not."""
        if max_node_executions is not None and self.execution_count >= max_node_executions:
            return False, f"Max node executions reached: {max_node_executions}"
        if execution_timeout is not None and time.time() - self.start_time > execution_timeout:
            return False, f"Execution timed out: {execution_timeout}s"
        return True, "Continuing"


@dataclass
class GraphResult(MultiAgentResult):
    """A graph's result, with its node counts and execution order."""

    total_nodes: int = 0
    completed_nodes: int = 0
    failed_nodes: int = 0
    interrupted_nodes: int = 0
    execution_order: list[GraphNode] = field(default_factory=list)
    edges: list[tuple[GraphNode, GraphNode]] = field(default_factory=list)
    entry_points: list[GraphNode] = field(default_factory=list)


class GraphBuilder:
    """Builds a `Graph`: add nodes and edges, choose entry points and limits, then `build()`."""

    def __init__(self) -> None:
        self.nodes: dict[str, GraphNode] = {}
        self.edges: list[GraphEdge] = []
        self.entry_points: list[GraphNode] = []
        self._max_node_executions: int | None = None
        self._execution_timeout: float | None = None
        self._node_timeout: float | None = None
        self._reset_on_revisit = False
        self._id = "default_graph"
        self._session_manager: Any = None
        self._hooks: list[HookProvider] | None = None
        self._plugins: list[MultiAgentPlugin] | None = None

    def add_node(
        self, executor: Agent | MultiAgentBase, node_id: str | None = None, *, fan_in: FanIn = "any"
    ) -> GraphNode:
        """Add a node; its id defaults to the executor's ``id`` or ``name``.

        Raises:
            ValueError: The id is taken, the executor is already a node, or ``fan_in`` is unknown.
        """
        if node_id is None:
            node_id = getattr(executor, "id", None) or getattr(executor, "name", None) or f"node_{len(self.nodes)}"
        if node_id in self.nodes:
            raise ValueError(f"Node '{node_id}' already exists")
        if any(node.executor is executor for node in self.nodes.values()):
            raise ValueError("Duplicate node instance detected. Each node must have a unique object instance.")
        if fan_in not in ("any", "all"):
            raise ValueError(f"fan_in={fan_in!r} | must be 'any' (run when any parent completes) or 'all'")
        node = GraphNode(node_id=node_id, executor=executor, fan_in=fan_in)
        self.nodes[node_id] = node
        return node

    def add_edge(
        self, from_node: str | GraphNode, to_node: str | GraphNode, condition: EdgeCondition | None = None
    ) -> GraphEdge:
        """Add an edge between two existing nodes.

        Raises:
            ValueError: A node is unknown.
        """
        source = self._resolve(from_node, "Source")
        target = self._resolve(to_node, "Target")
        edge = GraphEdge(source, target, condition)
        self.edges.append(edge)
        target.dependencies.add(source)
        return edge

    def _resolve(self, node: str | GraphNode, role: str) -> GraphNode:
        node_id = node.node_id if isinstance(node, GraphNode) else node
        if node_id not in self.nodes:
            raise ValueError(
                f"Node '{node_id}' not found" if role == "Entry point" else f"{role} node '{node_id}' not found"
            )
        return self.nodes[node_id]

    def set_entry_point(self, node_id: str) -> "GraphBuilder":
        """Mark a node as an entry point.

        Raises:
            ValueError: The node is unknown.
        """
        node = self._resolve(node_id, "Entry point")
        if node not in self.entry_points:
            self.entry_points.append(node)
        return self

    def reset_on_revisit(self, enabled: bool = True) -> "GraphBuilder":
        """Reset a node's agent to its initial state when a cycle runs it again."""
        self._reset_on_revisit = enabled
        return self

    def set_max_node_executions(self, max_executions: int) -> "GraphBuilder":
        """Limit the number of node executions of a run."""
        self._max_node_executions = max_executions
        return self

    def set_execution_timeout(self, timeout: float) -> "GraphBuilder":
        """Limit the duration of a run, in seconds."""
        self._execution_timeout = timeout
        return self

    def set_node_timeout(self, timeout: float) -> "GraphBuilder":
        """Limit the duration of each node execution, in seconds."""
        self._node_timeout = timeout
        return self

    def set_graph_id(self, graph_id: str) -> "GraphBuilder":
        """Set the id session managers store the graph under.

        Raises:
            InvalidIdError: The id could not name a session file (a `ValueError`; see `strandslike._identifier`).
        """
        self._id = validate_id(graph_id, "graph")
        return self

    def set_session_manager(self, session_manager: Any) -> "GraphBuilder":
        """Persist the graph (and its nodes) with this session manager."""
        self._session_manager = session_manager
        return self

    def set_hook_providers(self, hooks: list[HookProvider]) -> "GraphBuilder":
        """Register hook providers on the graph."""
        self._hooks = hooks
        return self

    def set_plugins(self, plugins: list[MultiAgentPlugin]) -> "GraphBuilder":
        """Attach multi-agent plugins to the graph (their ``init_multi_agent`` runs when it is built).

        Raises:
            PluginTypeError: ``plugins`` is not a list of `MultiAgentPlugin` instances.
        """
        for plugin in as_list(plugins, "set_plugins()"):
            check_plugin(plugin, MultiAgentPlugin, "set_plugins()")
        self._plugins = list(plugins)
        return self

    def build(self) -> "Graph":
        """Validate and build the graph.

        Raises:
            ValueError: No nodes, no entry point, or an entry point that is not a node.
        """
        if not self.nodes:
            raise ValueError("Graph must contain at least one node")
        entry_points = self.entry_points or [node for node in self.nodes.values() if not node.dependencies]
        if not entry_points:
            raise ValueError("No entry points found - all nodes have dependencies")
        limited = self._max_node_executions is not None or self._execution_timeout is not None
        if not limited and any(node in _ancestors(node) for node in self.nodes.values()):
            logger.warning("Graph has cycles but no max_node_executions or execution_timeout: it may run forever")
        return Graph(
            nodes=self.nodes,
            edges=self.edges,
            entry_points=entry_points,
            max_node_executions=self._max_node_executions,
            execution_timeout=self._execution_timeout,
            node_timeout=self._node_timeout,
            reset_on_revisit=self._reset_on_revisit,
            session_manager=self._session_manager,
            hooks=self._hooks,
            id=self._id,
            plugins=self._plugins,
        )


def _ancestors(node: GraphNode) -> set[GraphNode]:
    seen: set[GraphNode] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        for parent in current.dependencies:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen


class Graph(Orchestrator):
    """Run nodes along directed edges; concurrent where dependencies allow; interruptible at every node."""

    def __init__(
        self,
        nodes: dict[str, GraphNode],
        edges: Iterable[GraphEdge],
        entry_points: Iterable[GraphNode],
        max_node_executions: int | None = None,
        execution_timeout: float | None = None,
        node_timeout: float | None = None,
        reset_on_revisit: bool = False,
        session_manager: Any = None,
        hooks: list[HookProvider] | None = None,
        id: str = "default_graph",
        trace_attributes: Mapping[str, Any] | None = None,
        plugins: list[MultiAgentPlugin] | None = None,
    ) -> None:
        """Build a graph; prefer `GraphBuilder`, which validates the structure.

        Hooks are registered after the session manager; ``plugins`` are attached once the graph is complete, just
        before `MultiAgentInitializedEvent` fires.
        """
        self.nodes = nodes
        self.edges = list(edges)
        self.entry_points = list(entry_points)
        self.max_node_executions = max_node_executions
        self.execution_timeout = execution_timeout
        self.node_timeout = node_timeout
        self.reset_on_revisit = reset_on_revisit
        self.trace_attributes = trace_attribute_values(trace_attributes)
        self._outgoing: dict[str, list[GraphEdge]] = {node_id: [] for node_id in nodes}
        self._incoming: dict[str, list[GraphEdge]] = {node_id: [] for node_id in nodes}
        for edge in self.edges:
            self._outgoing[edge.from_node.node_id].append(edge)
            self._incoming[edge.to_node.node_id].append(edge)
        self._setup(id, hooks, session_manager)
        self._check_node_executors({node_id: node.executor for node_id, node in nodes.items()}, "Graph")
        self.state = self._fresh_state("")
        # Where an interrupted run stopped: the nodes to run on resume, and the completed part of their batch.
        self._resume_nodes: list[str] = []
        self._resume_completed: list[str] = []
        self._fire_initialized(plugins)

    def _executor(self, node_id: str) -> Any:
        return self.nodes[node_id].executor

    def _node_ids(self) -> list[str]:
        return list(self.nodes)

    def _fresh_state(self, task: Any) -> GraphState:
        return GraphState(
            task=task,
            total_nodes=len(self.nodes),
            edges=[(edge.from_node, edge.to_node) for edge in self.edges],
            entry_points=list(self.entry_points),
        )

    async def _run(
        self,
        task: Any,
        invocation_state: dict[str, Any],
        emit: Emit | None,
        node_answers: dict[str, list[InterruptResponseContent]] | None,
    ) -> GraphResult:
        state = self.state
        if node_answers is None:
            state = self.state = self._fresh_state(task)
            for node in self.nodes.values():
                node.execution_status = Status.PENDING
                node.result = None
            ready = list(self.entry_points)
            carried: list[GraphNode] = []
        else:
            # The batch the run stopped in: its nodes still to finish (interrupted ones, and any a dead process was
            # running), and those that completed in it. A run that stopped between batches goes on with the next.
            ready = [self.nodes[node_id] for node_id in self._resume_nodes]
            carried = [self.nodes[node_id] for node_id in self._resume_completed]
            if not ready and carried:
                ready, carried = self._next_ready(carried, invocation_state), []
            state.start_time = time.time()
        state.status = Status.EXECUTING
        started = time.perf_counter()
        interrupted: list[GraphNode] = []
        with anyio.move_on_after(
            self.execution_timeout if self.execution_timeout is not None else float("inf")
        ) as scope:
            while ready:
                allowed, reason = state.should_continue(self.max_node_executions, None)
                if not allowed:
                    logger.warning("graph_id=<%s> | %s", self.id, reason)
                    state.status = Status.FAILED
                    break
                # Where the run stands, persisted with the graph's state (after each node and with each node tool's
                # intent): the batch, less its nodes as they finish, and what completed in it.
                self._resume_nodes = [node.node_id for node in ready]
                self._resume_completed = [node.node_id for node in carried]
                completed, interrupted = await self._run_batch(ready, invocation_state, emit, node_answers or {})
                node_answers = {}
                if interrupted:
                    self._resume_nodes = [node.node_id for node in interrupted]
                    self._resume_completed = [node.node_id for node in carried + completed]
                    break
                ready = self._next_ready(carried + completed, invocation_state)
                carried = []
                self._resume_nodes, self._resume_completed = [], [node.node_id for node in completed]
        if scope.cancelled_caught:
            logger.warning("graph_id=<%s> | execution timed out after %ss", self.id, self.execution_timeout)
            for node in self.nodes.values():
                if node.execution_status == Status.EXECUTING:
                    self._record(node, NodeResult(TimeoutError("graph execution timed out"), status=Status.FAILED))
            state.status = Status.FAILED
            interrupted = []
        state.execution_time += round((time.perf_counter() - started) * 1000)
        if interrupted:
            state.status = Status.INTERRUPTED
            self._interrupt_state.activate()
        else:
            if state.status == Status.EXECUTING:
                state.status = Status.FAILED if state.failed_nodes else Status.COMPLETED
            self._interrupt_state.deactivate()
            self._resume_nodes, self._resume_completed = [], []
        return self._build_result()

    async def _run_batch(
        self,
        batch: list[GraphNode],
        invocation_state: dict[str, Any],
        emit: Emit | None,
        node_answers: dict[str, list[InterruptResponseContent]],
    ) -> tuple[list[GraphNode], list[GraphNode]]:
        """Run a batch concurrently; return its completed and its interrupted nodes."""
        completed: list[GraphNode] = []
        interrupted: list[GraphNode] = []

        async def run(node: GraphNode) -> None:
            answers = node_answers.get(node.node_id)
            if node in self.state.interrupted_nodes and answers is None and node.result is not None:
                if not _waits_on_hooks(node.result):
                    interrupted.append(node)  # nothing answered for it: leave it waiting, do not run it again
                    return
            if node in self.state.completed_nodes and self.reset_on_revisit and answers is None:
                if not in_flight(node.executor):  # a node whose tool was cut short by a crash is continued
                    node.reset_executor_state()
            node.execution_status = Status.EXECUTING
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
            if result.status == Status.COMPLETED:
                completed.append(node)
            elif result.status == Status.INTERRUPTED:
                self._record(node, result)
                interrupted.append(node)

        try:
            if len(batch) == 1:  # nothing to run beside it: no task group
                await run(batch[0])
            else:
                async with anyio.create_task_group() as group:
                    for node in batch:
                        group.start_soon(run, node)
        except BaseExceptionGroup as group_error:
            # A hook raised (node failures are results, not exceptions): surface it with its own type.
            if len(group_error.exceptions) == 1:
                raise group_error.exceptions[0] from None
            raise
        if len(batch) > 1:
            order = {node.node_id: index for index, node in enumerate(batch)}
            completed.sort(key=lambda node: order[node.node_id])
            interrupted.sort(key=lambda node: order[node.node_id])
        return completed, interrupted

    def _finished(self, node: GraphNode, result: NodeResult) -> None:
        """Record a node that completed or failed, before `AfterNodeCallEvent` persists the graph's state."""
        self._record(node, result)
        if node.node_id in self._resume_nodes:
            self._resume_nodes.remove(node.node_id)
        if result.status == Status.COMPLETED and node.node_id not in self._resume_completed:
            self._resume_completed.append(node.node_id)

    def _record(self, node: GraphNode, result: NodeResult) -> None:
        state = self.state
        node.result = result
        node.execution_status = result.status
        node.execution_time = result.execution_time
        state.results[node.node_id] = result
        state.interrupted_nodes.discard(node)
        if result.status == Status.INTERRUPTED:
            state.interrupted_nodes.add(node)
            return
        state.execution_count += 1
        state.execution_order.append(node)
        accumulate(state.accumulated_usage, state.accumulated_metrics, result)
        if result.status == Status.COMPLETED:
            state.completed_nodes.add(node)
            state.failed_nodes.discard(node)
        else:
            state.failed_nodes.add(node)

    def _next_ready(self, completed_batch: list[GraphNode], invocation_state: dict[str, Any]) -> list[GraphNode]:
        """Return the nodes a completed batch makes ready, by each node's fan-in rule."""
        batch = set(completed_batch)
        ready: list[GraphNode] = []
        for source in completed_batch:
            for edge in self._outgoing[source.node_id]:
                target = edge.to_node
                if target in ready:
                    continue
                incoming = self._incoming[target.node_id]
                if target.fan_in == "all":
                    is_ready = all(
                        candidate.from_node in self.state.completed_nodes
                        and candidate.should_traverse(self.state, invocation_state=invocation_state)
                        for candidate in incoming
                    )
                else:
                    is_ready = any(
                        candidate.from_node in batch
                        and candidate.should_traverse(self.state, invocation_state=invocation_state)
                        for candidate in incoming
                    )
                if is_ready:
                    ready.append(target)
        return ready

    def _node_input(self, node: GraphNode) -> Any:
        """Return the task for entry nodes, else the task plus the outputs of the node's completed parents."""
        parents = [parent for parent in self._parents(node) if parent in self.state.completed_nodes]
        if not parents:
            return self.state.task
        content: list[ContentBlock] = []
        task = self.state.task
        if isinstance(task, str):
            content.append({"text": f"Original Task: {task}"})
        else:
            content.append({"text": "Original Task:"})
            content.extend(
                cast(ContentBlock, block)
                for block in task
                if isinstance(block, dict) and "interruptResponse" not in block
            )
        content.append({"text": "\nInputs from previous nodes:"})
        for parent in parents:
            content.append({"text": f"\nFrom {parent.node_id}:"})
            result = self.state.results.get(parent.node_id)
            if result is None:
                continue
            for agent_result in result.get_agent_results():
                name = (
                    getattr(parent.executor, "name", parent.node_id)
                    if isinstance(parent.executor, Agent)
                    else parent.node_id
                )
                content.append({"text": f"  - {name}: {str(agent_result).strip()}"})
        return content

    def _parents(self, node: GraphNode) -> list[GraphNode]:
        return [edge.from_node for edge in self._incoming[node.node_id]]

    def _build_result(self) -> GraphResult:
        state = self.state
        return GraphResult(
            status=state.status,
            results=dict(state.results),
            accumulated_usage=copy.copy(state.accumulated_usage),
            accumulated_metrics=copy.copy(state.accumulated_metrics),
            execution_count=state.execution_count,
            execution_time=state.execution_time,
            interrupts=self.pending_interrupts if state.status == Status.INTERRUPTED else [],
            total_nodes=state.total_nodes,
            completed_nodes=len(state.completed_nodes),
            failed_nodes=len(state.failed_nodes),
            interrupted_nodes=len(state.interrupted_nodes),
            execution_order=list(state.execution_order),
            edges=list(state.edges),
            entry_points=list(state.entry_points),
        )

    # -- persistence ------------------------------------------------------------------------------------------------

    def serialize_state(self) -> dict[str, Any]:
        """Return the run's state, each node's result and each node's agent state, as JSON-serializable data."""
        state = self.state
        return {
            "type": "graph",
            "id": self.id,
            "status": state.status.value,
            "completed_nodes": [node.node_id for node in state.completed_nodes],
            "failed_nodes": [node.node_id for node in state.failed_nodes],
            "interrupted_nodes": [node.node_id for node in state.interrupted_nodes],
            "node_results": {node_id: result.to_dict() for node_id, result in state.results.items()},
            "next_nodes_to_execute": list(self._resume_nodes),
            "resume_completed": list(self._resume_completed),
            "current_task": state.task,
            "execution_order": [node.node_id for node in state.execution_order],
            "accumulated_usage": dict(state.accumulated_usage),
            "accumulated_metrics": dict(state.accumulated_metrics),
            "execution_count": state.execution_count,
            "execution_time": state.execution_time,
            **self._persisted_nodes(),
        }

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        """Restore a graph saved by `serialize_state` (node ids must match).

        Raises:
            ValueError: The payload names nodes this graph does not have.
        """
        self._restore_nodes(payload, "graph", "nodes")
        state = self._fresh_state(payload.get("current_task", ""))
        state.status = Status(payload.get("status", "pending"))
        by_id = self.nodes
        state.completed_nodes = {by_id[n] for n in payload.get("completed_nodes", []) if n in by_id}
        state.failed_nodes = {by_id[n] for n in payload.get("failed_nodes", []) if n in by_id}
        state.interrupted_nodes = {by_id[n] for n in payload.get("interrupted_nodes", []) if n in by_id}
        state.results = {n: NodeResult.from_dict(raw) for n, raw in payload.get("node_results", {}).items()}
        state.execution_order = [by_id[n] for n in payload.get("execution_order", []) if n in by_id]
        state.accumulated_usage = {**zero_usage(), **payload.get("accumulated_usage", {})}
        state.accumulated_metrics = {**zero_metrics(), **payload.get("accumulated_metrics", {})}
        state.execution_count = int(payload.get("execution_count", 0))
        state.execution_time = int(payload.get("execution_time", 0))
        for node_id, result in state.results.items():
            if node_id in by_id:
                by_id[node_id].result = result
                by_id[node_id].execution_status = result.status
        self.state = state
        self._resume_nodes = list(payload.get("next_nodes_to_execute", []))
        self._resume_completed = list(payload.get("resume_completed", []))


def _waits_on_hooks(result: NodeResult) -> bool:
    """Whether an interrupted node waits on its `BeforeNodeCallEvent` hooks (re-run them) or on itself."""
    return all(interrupt.id.startswith("v1:before_node_call:") for interrupt in result.interrupts)


__all__ = ["Graph", "GraphBuilder", "GraphEdge", "GraphNode", "GraphResult", "GraphState"]
