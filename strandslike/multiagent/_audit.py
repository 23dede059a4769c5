"""The interrupt audit trail of a Graph or Swarm: the life of every interrupt of the orchestration, node by node.

An orchestrator's trail uses the same entries as `Agent.interrupt_audit` (``time``, ``event``, ``interrupt_id``,
``name`` and details), with the orchestration's own interrupt ids and the ``node_id`` each one concerns:

- ``raised``: by a `BeforeNodeCallEvent` hook (``by`` names the hook and the node), or inside a node (``by`` is
  ``node <id>: <what raised it there>``, a tool or a hook of the node's agent, and ``inner_id`` the node's own id);
- ``answered``: how (``action``: resume, respond, restart or cancel; ``answer``; ``edited_input``);
- what then ran: for a hook's interrupt, ``outcome`` ``node ran`` or ``node cancelled: ...``; for one raised inside
  a node, the node's own entries for it (``outcome`` with the tool's result, ``tool_outcome_unknown``, ...),
  or, if the node recorded none, ``outcome`` ``node completed``, ``node failed: ...`` or ``node interrupted
  again``.

The trail is part of the orchestrator's interrupt state, so it is persisted with the orchestrator's session and
restored in a fresh process; it survives the end of the run and the reset of a node's agent.
"""

from collections.abc import Callable
from typing import Any

from ..interrupt import Interrupt
from ..interrupt._state import _InterruptState

# What the node's own trail already says at the orchestrator's level.
_RECORDED_BY_ORCHESTRATOR = ("raised", "answered")


class OrchestratorInterruptState(_InterruptState):
    """An interrupt state whose audit entries name the node each interrupt concerns."""

    __slots__ = ("_node_of",)

    def __init__(self, node_of: Callable[[str], str | None]) -> None:
        super().__init__()
        self._node_of = node_of

    def record(self, interrupt: Interrupt, event: str, **details: Any) -> None:
        """Append an audit entry, with the ``node_id`` the interrupt concerns."""
        if "node_id" not in details:
            node_id = self._node_of(interrupt.id)
            if node_id is not None:
                details = {"node_id": node_id, **details}
        super().record(interrupt, event, **details)


def audit_length(executor: Any) -> int:
    """Return how many entries a node's own trail holds (an agent's or a nested orchestrator's)."""
    state = getattr(executor, "_interrupt_state", None)
    return len(state.audit) if isinstance(state, _InterruptState) else 0


def settle_node_answers(
    state: _InterruptState,
    routes: dict[str, list[str]],
    node_id: str,
    executor: Any,
    answered: list[str],
    mark: int,
    fallback: str,
) -> None:
    """Record, against the orchestration's interrupts, what ran in a node after its answers were handed to it.

    Args:
        state: The orchestrator's interrupt state.
        routes: The orchestrator's routes: its interrupt id -> ``[node_id, the node's own interrupt id]``.
        node_id: The node that was resumed.
        executor: The node's agent or nested orchestrator.
        answered: The node's own ids of the interrupts answered.
        mark: The length of the node's trail before it was resumed.
        fallback: The outcome of an answered interrupt the node recorded nothing for.
    """
    outer_of = {inner: outer for outer, (node, inner) in routes.items() if node == node_id}
    inner_state = getattr(executor, "_interrupt_state", None)
    entries = inner_state.audit[mark:] if isinstance(inner_state, _InterruptState) else []
    settled: set[str] = set()
    for entry in entries:
        inner_id = str(entry.get("interrupt_id"))
        outer = state.interrupts.get(outer_of.get(inner_id, ""))
        if outer is None or entry.get("event") in _RECORDED_BY_ORCHESTRATOR:
            continue
        # The node's own ids (and a nested orchestrator's node) stay inside the node: inner_id points there.
        skipped = ("time", "event", "interrupt_id", "name", "node_id", "inner_id")
        details = {key: value for key, value in entry.items() if key not in skipped}
        state.record(outer, str(entry.get("event")), inner_id=inner_id, **details)
        settled.add(inner_id)
    for inner_id in answered:
        outer = state.interrupts.get(outer_of.get(inner_id, ""))
        if outer is not None and inner_id not in settled:
            state.record(outer, "outcome", action=outer.action or "resume", result=fallback, inner_id=inner_id)
