"""The interrupt audit trail of a Graph or Swarm: the life of every interrupt of the orchestration, node by node.

An orchestrator's trail uses the same entries as `Agent.interrupt_audit` (``time``, ``event``, ``interrupt_id``,
``name`` and details), with the orchestration's own interrupt ids and the ``node_id`` each one concerns:

- ``raised``: by a `BeforeNodeCallEvent` hook (``by`` names the hook and the node), or inside a node (``by`` is
  ``node <id>: <what raised it there>``, a tool or a hook of the node's agent, and ``inner_id`` the node's own id);
- ``answered``: how (``action``: resume, respond, restart or cancel; ``answer``; ``edited_input``);
- what then ran: for a hook's interrupt, ``outcome`` ``node ran`` or ``node cancelled: ...``; for one raised inside
  a node, the node's own entries for it (``outcome`` with the tool's result, ``tool_outcome_unknown``, ...),
  or, if the node recorded none, ``outcome`` ``node completed``, ``node failed: ...`` or ``node interrupted
  again``;
- a node tool whose body an earlier process started and never finished (see `strandslike.tools.journal`):
  ``tool_outcome_unknown`` (not run again), ``tool_rerun`` (idempotent, run again) or ``tool_result_recovered``,
  with ``tool``, ``tool_use_id``, ``idempotency_key`` and ``node_path`` (``"cleanup"``, or ``"outer/inner"`` down
  a nested orchestrator), against the interrupt that approved the call if there was one, else with
  ``interrupt_id`` None.

The trail is part of the orchestrator's interrupt state, so it is persisted with the orchestrator's session and
restored in a fresh process; it survives the end of the run and the reset of a node's agent.
"""

import time
from collections.abc import Callable
from typing import Any

from ..interrupt import Interrupt
from ..interrupt._state import _InterruptState
from ._nodes import path_part

# What the node's own trail already says at the orchestrator's level.
_RECORDED_BY_ORCHESTRATOR = ("raised", "answered")
# A node's entries about a tool whose body an earlier process started: recorded whether or not an interrupt of the
# orchestration approved the call.
TOOL_RECOVERY_EVENTS = ("tool_outcome_unknown", "tool_rerun", "tool_result_recovered")


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
    fallback: str | None,
) -> None:
    """Record, against the orchestration's interrupts, what ran in a node (after the answers it was handed, if any).

    Args:
        state: The orchestrator's interrupt state.
        routes: The orchestrator's routes: its interrupt id -> ``[node_id, the node's own interrupt id]``.
        node_id: The node that ran.
        executor: The node's agent or nested orchestrator.
        answered: The node's own ids of the interrupts answered (empty for a node that was not resumed).
        mark: The length of the node's trail before it ran.
        fallback: The outcome of an answered interrupt the node recorded nothing for (None: record none).
    """
    outer_of = {inner: outer for outer, (node, inner) in routes.items() if node == node_id}
    inner_state = getattr(executor, "_interrupt_state", None)
    entries = inner_state.audit[mark:] if isinstance(inner_state, _InterruptState) else []
    settled: set[str] = set()
    for entry in entries:
        inner_id = str(entry.get("interrupt_id"))
        outer = state.interrupts.get(outer_of.get(inner_id, ""))
        event = str(entry.get("event"))
        if event in TOOL_RECOVERY_EVENTS:
            _record_tool_recovery(state, outer, node_id, entry)
            continue
        if outer is None or event in _RECORDED_BY_ORCHESTRATOR:
            continue
        # The node's own ids (and a nested orchestrator's node) stay inside the node: inner_id points there.
        details = {key: value for key, value in entry.items() if key not in _SKIPPED}
        state.record(outer, event, inner_id=inner_id, **details)
        settled.add(inner_id)
    if fallback is None:
        return
    for inner_id in answered:
        outer = state.interrupts.get(outer_of.get(inner_id, ""))
        if outer is not None and inner_id not in settled:
            state.record(outer, "outcome", action=outer.action or "resume", result=fallback, inner_id=inner_id)


_SKIPPED = ("time", "event", "interrupt_id", "name", "node_id", "inner_id", "node_path")


def _record_tool_recovery(state: _InterruptState, outer: Interrupt | None, node_id: str, entry: dict[str, Any]) -> None:
    """Record a node's entry about a tool an earlier process left unfinished, with the path down to the node."""
    inner_path = entry.get("node_path")
    part = path_part(node_id)
    details = {key: value for key, value in entry.items() if key not in _SKIPPED}
    details["node_path"] = f"{part}/{inner_path}" if isinstance(inner_path, str) else part
    inner_id = entry.get("interrupt_id")
    if inner_id is not None:
        details["inner_id"] = inner_id
    if outer is not None:
        state.record(outer, str(entry["event"]), node_id=node_id, **details)
        return
    state.append_entry(
        {
            "time": time.time(),
            "event": entry["event"],
            "interrupt_id": None,
            "name": None,
            "node_id": node_id,
            **details,
        }
    )
