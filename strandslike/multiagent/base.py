"""Shared multi-agent types: `Status`, `NodeResult`, `MultiAgentResult` and the `MultiAgentBase` contract."""

import warnings
from abc import ABC
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Union

from .._streams import iterate_events
from .._sync import run_sync
from ..agent.agent_result import AgentResult
from ..hooks.registry import HookOrder, HookRegistry
from ..interrupt import Interrupt
from ..tools.journal import ToolJournal
from ..types.streaming import Metrics, Usage

Emit = Callable[[dict[str, Any]], None]


def zero_usage() -> Usage:
    """Return an empty token usage."""
    return {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def zero_metrics() -> Metrics:
    """Return empty latency metrics."""
    return {"latencyMs": 0}


class Status(Enum):
    """Execution status of an orchestration or one of its nodes."""

    PENDING = "pending"
    DISPATCHED = "dispatched"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


def _interrupt_from_dict(data: dict[str, Any]) -> Interrupt:
    interrupt = Interrupt(data["id"], data["name"], data.get("reason"), data.get("response"))
    if "answered" in data:
        interrupt.answered = bool(data["answered"])
    return interrupt


@dataclass
class NodeResult:
    """The outcome of one node: an agent's result, a nested orchestration's result, or the exception it failed with.

    Attributes:
        result: `AgentResult`, `MultiAgentResult`, or the `Exception` that failed the node.
        execution_time: Milliseconds the node ran.
        status: The node's status.
        accumulated_usage: Tokens used by the node (and its children).
        accumulated_metrics: Latency of the node's model calls.
        execution_count: How many node executions this result covers.
        interrupts: Interrupts the node is waiting on (ids unique across the orchestration).
    """

    result: Union[AgentResult, "MultiAgentResult", Exception]
    execution_time: int = 0
    status: Status = Status.PENDING
    accumulated_usage: Usage = field(default_factory=zero_usage)
    accumulated_metrics: Metrics = field(default_factory=zero_metrics)
    execution_count: int = 0
    interrupts: list[Interrupt] = field(default_factory=list)

    def __str__(self) -> str:
        return str(self.result)

    def get_agent_results(self) -> list[AgentResult]:
        """Return the agent results of this node, flattened across nested orchestrations."""
        if isinstance(self.result, AgentResult):
            return [self.result]
        if isinstance(self.result, MultiAgentResult):
            return [agent for node in self.result.results.values() for agent in node.get_agent_results()]
        return []

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        result: dict[str, Any]
        if isinstance(self.result, Exception):
            result = {"type": "exception", "message": str(self.result)}
        else:
            result = self.result.to_dict()
        return {
            "result": result,
            "execution_time": self.execution_time,
            "status": self.status.value,
            "accumulated_usage": dict(self.accumulated_usage),
            "accumulated_metrics": dict(self.accumulated_metrics),
            "execution_count": self.execution_count,
            "interrupts": [interrupt.to_dict() for interrupt in self.interrupts],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "NodeResult":
        """Rebuild a node result from `to_dict` output.

        Raises:
            TypeError: The payload is not a node result.
        """
        if "result" not in data:
            raise TypeError("NodeResult.from_dict: missing 'result'")
        raw = data["result"]
        result: AgentResult | MultiAgentResult | Exception
        kind = raw.get("type") if isinstance(raw, dict) else None
        if kind == "agent_result":
            result = AgentResult.from_dict(raw)
        elif kind == "multiagent_result":
            result = MultiAgentResult.from_dict(raw)
        elif kind == "exception":
            result = Exception(str(raw.get("message", "node failed")))
        else:
            raise TypeError(f"NodeResult.from_dict: unsupported result payload: {raw!r}")
        return cls(
            result=result,
            execution_time=int(data.get("execution_time", 0)),
            status=Status(data.get("status", "pending")),
            accumulated_usage={**zero_usage(), **data.get("accumulated_usage", {})},
            accumulated_metrics={**zero_metrics(), **data.get("accumulated_metrics", {})},
            execution_count=int(data.get("execution_count", 0)),
            interrupts=[_interrupt_from_dict(raw) for raw in data.get("interrupts", [])],
        )


@dataclass
class MultiAgentResult:
    """The outcome of an orchestration.

    Attributes:
        status: Final status (``INTERRUPTED`` when it waits on ``interrupts``).
        results: Node results by node id; every node that ran, failed or was interrupted is present.
        accumulated_usage: Tokens used by all nodes.
        accumulated_metrics: Latency of all model calls.
        execution_count: Node executions.
        execution_time: Milliseconds the orchestration ran.
        interrupts: Interrupts waiting for an answer, with ids unique across the whole orchestration.
        replayed: True when the invocation repeated interrupt answers that were already applied and ran to
            completion: nothing ran (no node, no tool, no model call, no hook) and the result is the
            orchestration's as it stands, as `AgentResult.replayed` is for an agent.
    """

    status: Status = Status.PENDING
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: Usage = field(default_factory=zero_usage)
    accumulated_metrics: Metrics = field(default_factory=zero_metrics)
    execution_count: int = 0
    execution_time: int = 0
    interrupts: list[Interrupt] = field(default_factory=list)
    replayed: bool = field(default=False, kw_only=True)

    def __str__(self) -> str:
        if self.interrupts:
            return str([interrupt.to_dict() for interrupt in self.interrupts])
        parts = []
        for node_id, node_result in self.results.items():
            text = str(node_result).removesuffix("\n")
            if text:
                parts.append(f"{node_id}: {text}")
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        data: dict[str, Any] = {
            "type": "multiagent_result",
            "status": self.status.value,
            "results": {node_id: result.to_dict() for node_id, result in self.results.items()},
            "accumulated_usage": dict(self.accumulated_usage),
            "accumulated_metrics": dict(self.accumulated_metrics),
            "execution_count": self.execution_count,
            "execution_time": self.execution_time,
            "interrupts": [interrupt.to_dict() for interrupt in self.interrupts],
        }
        if self.replayed:
            data["replayed"] = True
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "MultiAgentResult":
        """Rebuild a result from `to_dict` output.

        Raises:
            TypeError: The payload is not a multi-agent result.
        """
        if data.get("type") != "multiagent_result":
            raise TypeError(f"MultiAgentResult.from_dict: unexpected type {data.get('type')!r}")
        return cls(
            status=Status(data["status"]),
            results={node_id: NodeResult.from_dict(raw) for node_id, raw in data.get("results", {}).items()},
            accumulated_usage={**zero_usage(), **data.get("accumulated_usage", {})},
            accumulated_metrics={**zero_metrics(), **data.get("accumulated_metrics", {})},
            execution_count=int(data.get("execution_count", 0)),
            execution_time=int(data.get("execution_time", 0)),
            interrupts=[_interrupt_from_dict(raw) for raw in data.get("interrupts", [])],
            replayed=bool(data.get("replayed", False)),
        )


class MultiAgentBase(ABC):
    """Base of orchestrators: run a task (or resume one with interrupt responses) over several nodes.

    Subclasses implement `_execute`, which reports progress through an ``emit`` callback; the base class turns
    it into `invoke_async`, `stream_async` and the blocking ``__call__``. A Strands-style subclass that
    overrides `invoke_async` instead works too.

    Attributes:
        id: Identifier used by session managers.
        hooks: The orchestrator's hook registry.
    """

    id: str
    hooks: HookRegistry

    async def invoke_async(
        self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any
    ) -> MultiAgentResult:
        """Run the orchestration (or resume it with ``interruptResponse`` blocks) and return its result."""
        return await self._execute(task, _merge(invocation_state, kwargs), None)

    async def stream_async(
        self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """Run the orchestration and yield its events; the last one is ``{"type": "multiagent_result", ...}``.

        Events: ``multiagent_node_start``, ``multiagent_node_stream`` (a node's own events), ``multiagent_node_stop``,
        ``multiagent_handoff``, ``multiagent_node_cancel``, ``multiagent_node_interrupt`` and the final result.
        Iterate to the end, or wrap the call in ``contextlib.aclosing`` if you may stop early.
        """
        merged = _merge(invocation_state, kwargs)

        async def run(emit: Emit) -> MultiAgentResult:
            return await self._execute(task, merged, emit)

        # Close the inner generator here, in this task, when the consumer stops early.
        async with aclosing(
            iterate_events(run, lambda result: {"type": "multiagent_result", "result": result})
        ) as events:
            async for event in events:
                yield event

    def __call__(self, task: Any, invocation_state: dict[str, Any] | None = None, **kwargs: Any) -> MultiAgentResult:
        """Blocking twin of `invoke_async`; works with and without a running event loop.

        Extra keyword arguments are merged into the invocation state (with Strands' deprecation warning), and
        `invoke_async` receives that state, as in Strands.
        """
        state = dict(invocation_state or {})
        if kwargs:
            state.update(kwargs)
            warnings.warn("`**kwargs` parameter is deprecating, use `invocation_state` instead.", stacklevel=2)
        return run_sync(self.invoke_async, task, state)

    async def _execute(self, task: Any, invocation_state: dict[str, Any], emit: Emit | None) -> MultiAgentResult:
        """Run or resume the orchestration, reporting events through ``emit``.

        The default serves Strands-style subclasses that implement `invoke_async` only (no events but the result).
        """
        if type(self).invoke_async is MultiAgentBase.invoke_async:
            raise NotImplementedError(f"{type(self).__name__} must implement _execute() or invoke_async()")
        return await self.invoke_async(task, invocation_state)

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts the orchestration waits on; Graph and Swarm list theirs, a custom subclass has none."""
        return []

    def serialize_state(self) -> dict[str, Any]:
        """Return a JSON-serializable snapshot of the orchestration state."""
        raise NotImplementedError

    def serialize_state_parts(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """Return `serialize_state()` with some node agents' conversations left out, and those by node path.

        A session manager uses it to write only what a node's conversation gained since its last write. The base
        class leaves nothing out: ``(self.serialize_state(), {})``. Graph and Swarm leave out every agent node's
        ``"messages"`` (nested Graphs and Swarms too) and return the live message lists by node path.
        """
        return self.serialize_state(), {}

    def tool_journals(self) -> dict[str, ToolJournal]:
        """Return the tool journals of the agents this orchestration runs, by node path.

        A node path is the node's id (``"research"``), or the ids from this orchestrator down to the agent for a
        nested orchestrator (``"outer/inner"``; a ``/`` or ``%`` inside an id is written ``%2F`` or ``%25``).
        A session manager that persists the orchestration journals every node agent's tool bodies in the
        orchestrator's own log through these (see `strandslike.tools.journal`). The base class runs no agents of
        its own and returns an empty dict; Graph and Swarm return every agent node's, nested ones included.
        """
        return {}

    def deserialize_state(self, payload: dict[str, Any]) -> None:
        """Restore the orchestration state from `serialize_state` output."""
        raise NotImplementedError

    def add_hook(
        self, callback: Callable[..., Any], event_type: Any = None, *, order: float = HookOrder.DEFAULT
    ) -> None:
        """Register a hook callback (event types inferred from its annotation when not given)."""
        self.hooks.add_callback(event_type, callback, order=order)


def _merge(invocation_state: dict[str, Any] | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    return {**(invocation_state or {}), **kwargs}
